// README snippet: pausing and resuming consumption (docs/pulsar-features.md).
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarServer, BabelQueueHealthIndicator, BabelQueueModule } from '../../../../lib/index.js';

@Injectable()
export class Shipments {
  readonly shipped: number[] = [];
}

@Controller()
export class ShipmentsController {
  constructor(@Inject(Shipments) private readonly shipments: Shipments) {}

  @BabelHandler('urn:babel:shipments:requested')
  ship(@Payload() data: { order_id: number }): void {
    this.shipments.shipped.push(data.order_id);
  }
}

/** Holds the shipments back while the warehouse system is down; messages wait on the broker, none is lost. */
@Injectable()
export class WarehouseWindow {
  constructor(
    @Inject(BabelPulsarServer) private readonly server: BabelPulsarServer,
    @Inject(BabelQueueHealthIndicator) private readonly health: BabelQueueHealthIndicator,
  ) {}

  /** Resolves once the shipments already being handled are settled. */
  async close(): Promise<void> {
    await this.server.pause({ topic: process.env.SHIPMENTS_TOPIC ?? 'shipments' }); // or pause(): every consumer
  }

  open(): void {
    this.server.resume({ topic: process.env.SHIPMENTS_TOPIC ?? 'shipments' });
  }

  /** 'paused' while closed (health stays up: a pause is deliberate). */
  status(): string {
    return this.health.check().consumers.status;
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.SHIPMENTS_TOPIC ?? 'shipments',
    }),
  ],
  controllers: [ShipmentsController],
  providers: [Shipments, WarehouseWindow],
})
export class ShipmentsModule {}
