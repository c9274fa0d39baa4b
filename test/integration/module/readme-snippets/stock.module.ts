// README snippet: settling a message from its handler, without throwing (docs/pulsar-features.md).
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelQueueModule } from '../../../../lib/index.js';

@Injectable()
export class Inventory {
  readonly known = new Set(['sku-1', 'sku-2']);
  syncing = false;
  readonly reserved: string[] = [];
}

@Controller()
export class ReservationsController {
  constructor(@Inject(Inventory) private readonly inventory: Inventory) {}

  @BabelHandler('urn:babel:stock:reserve')
  reserve(@Payload() data: { sku: string }, @Ctx() ctx: BabelContext): void {
    // Wrong for good: dead-lettered at once, the reason as the record's error (as a BabelNonRetriableError would be).
    if (!this.inventory.known.has(data.sku)) return ctx.deadLetter(`unknown SKU ${data.sku}`);
    // Not now: a retry copy due in 2 s, counted as an attempt (maxAttempts still ends in the dead-letter topic).
    if (this.inventory.syncing) return ctx.retry({ delayMs: 2000, reason: 'inventory is syncing' });
    this.inventory.reserved.push(data.sku);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.STOCK_TOPIC ?? 'stock',
    }),
  ],
  controllers: [ReservationsController],
  providers: [Inventory],
})
export class StockModule {}
