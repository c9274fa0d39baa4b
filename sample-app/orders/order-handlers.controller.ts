import { Controller, UseInterceptors } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler } from '@babelqueue/nestjs-pulsar';
import type { OrderCreated, PaymentCharge } from './order.dto.js';
import { OrderValidationPipe } from './order-validation.pipe.js';
import { OrdersStore } from './orders.store.js';
import { TimingInterceptor } from './timing.interceptor.js';

/** The BabelQueue side of the sample: one method per URN. */
@Controller()
@UseInterceptors(TimingInterceptor)
export class OrderHandlers {
  constructor(private readonly store: OrdersStore) {}

  /**
   * Records an order. The pipe rejects a bad quantity, and the sku OUT-OF-STOCK always fails: both end in .dlq.
   * An order of a customer not registered yet fails too, but that is fixable: register the customer, then
   * redrive the dead letter (what `npm run demo` does).
   */
  @BabelHandler('urn:babel:orders:created')
  created(@Payload(OrderValidationPipe) order: OrderCreated, @Ctx() ctx: BabelContext): void {
    if (order.sku === 'OUT-OF-STOCK') throw new Error(`sku ${order.sku} cannot be reserved`);
    if (order.customer !== undefined && !this.store.customers.has(order.customer)) {
      throw new Error(`customer ${order.customer} is not registered`);
    }
    this.record(ctx);
  }

  /** Fails on its first two deliveries, then succeeds: shows retry by re-publish. */
  @BabelHandler('urn:babel:payments:charge')
  charge(@Payload() _payment: PaymentCharge, @Ctx() ctx: BabelContext): void {
    if (ctx.getAttempts() < 2) throw new Error(`payment gateway timeout (attempt ${ctx.getAttempts() + 1})`);
    this.record(ctx);
  }

  private record(ctx: BabelContext): void {
    const envelope = ctx.getEnvelope();
    this.store.handled.push({
      urn: ctx.getUrn(),
      messageId: envelope.meta.id,
      traceId: envelope.trace_id,
      attempts: ctx.getAttempts(),
      replay: ctx.isReplay(),
      data: envelope.data,
      handledAt: Date.now(),
    });
  }
}
