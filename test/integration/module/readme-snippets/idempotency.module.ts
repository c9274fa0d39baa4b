// README snippet: idempotency. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Controller, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Redis } from 'ioredis';
import {
  BabelHandler,
  BabelQueueModule,
  Idempotent,
  InMemoryIdempotencyStore,
  RedisIdempotencyStore,
} from '../../../../lib/index.js';

export const redis = new Redis(process.env.REDIS_URL ?? 'redis://localhost:6379', { lazyConnect: true });
const local = new InMemoryIdempotencyStore({ maxEntries: 50_000, ttlMs: 60 * 60 * 1000 });

@Controller()
export class ChargesController {
  readonly captures: number[] = [];
  readonly refunds: number[] = [];

  // Every handler of the module's server skips a meta.id already handled (Redis: across instances).
  @BabelHandler('urn:babel:charges:captured')
  captured(@Payload('order_id') orderId: number): void {
    this.captures.push(orderId);
  }

  // One handler, with a store of its own (either form: this, or the idempotency option of @BabelHandler).
  @BabelHandler('urn:babel:charges:refunded')
  @Idempotent({ store: local })
  refunded(@Payload('order_id') orderId: number): void {
    this.refunds.push(orderId);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.CHARGES_TOPIC ?? 'charges',
      idempotency: { store: new RedisIdempotencyStore({ client: redis }) },
    }),
  ],
  controllers: [ChargesController],
})
export class ChargesModule {}
