// README snippet: the quick start, one file that imports none of its own, so it works unchanged in Nest 11 and 12.
// (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Controller, Injectable, Logger, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { BabelContext, BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../../lib/index.js';

interface OrderCreated {
  order_id: number;
  total: number;
}

@Injectable()
export class InvoicesService {
  readonly invoiced = new Map<number, number>();

  async createFor(orderId: number, total: number): Promise<void> {
    if (total < 0) throw new Error(`order ${orderId} has a negative total`);
    this.invoiced.set(orderId, total);
  }
}

// Consume: @BabelHandler methods live on controllers (Nest only scans controllers for message handlers).
@Controller()
export class OrdersController {
  private readonly logger = new Logger(OrdersController.name);

  constructor(private readonly invoices: InvoicesService) {}

  @BabelHandler('urn:babel:orders:created')
  async onOrderCreated(@Payload() order: OrderCreated, @Ctx() ctx: BabelContext): Promise<void> {
    this.logger.log(`order ${order.order_id} (trace ${ctx.getTraceId()}, attempt ${ctx.getAttempts() + 1})`);
    // Returning acknowledges the message. Throwing retries it (maxAttempts deliveries in total),
    // then dead-letters it to <topic>.dlq.
    await this.invoices.createFor(order.order_id, order.total);
  }

  @BabelHandler('urn:babel:orders:cancelled')
  onOrderCancelled(@Payload('order_id') orderId: number): void {
    this.invoices.invoiced.delete(orderId);
  }

  @BabelHandler('urn:babel:orders:payment-reminder')
  onPaymentReminder(@Payload('order_id') orderId: number): void {
    this.logger.log(`order ${orderId} is still unpaid`);
  }
}

// Publish, from any provider of any module (isGlobal below).
@Injectable()
export class OrdersService {
  constructor(private readonly babel: BabelPulsarClient) {}

  /** Resolves to the envelope's meta.id once Pulsar has stored the message. */
  placeOrder(order: { id: number; total: number }, traceId?: string): Promise<string> {
    return this.babel.publish(
      'urn:babel:orders:created',
      { order_id: order.id, total: order.total },
      {
        traceId, // continue the caller's trace (a new one when absent)
        key: `order-${order.id}`, // partition / Key_Shared ordering key
        headers: { 'x-tenant': 'acme' }, // extra Pulsar properties
      },
    );
  }

  /** Delivered in 15 minutes (Pulsar honours delays on Shared and Key_Shared subscriptions). */
  remindUnpaid(orderId: number): Promise<string> {
    return this.babel.publish('urn:babel:orders:payment-reminder', { order_id: orderId }, { delay: 15 * 60_000 });
  }

  /** Nest's event API works too: emit() publishes to the module's default topic. */
  async cancel(orderId: number): Promise<void> {
    await lastValueFrom(this.babel.emit('urn:babel:orders:cancelled', { order_id: orderId }));
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      // pulsar:// or pulsar+ssl:// → the native pulsar-client package (npm install pulsar-client);
      // http(s):// or ws(s):// (the broker's web port) → the built-in WebSocket client.
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.ORDERS_TOPIC ?? 'orders', // publish here by default, and consume it
      consumer: { subscription: 'billing', maxAttempts: 3, concurrency: 4 }, // dead letters go to <topic>.dlq
      isGlobal: true, // BabelPulsarClient can be injected in every module, not only in this one
    }),
  ],
  controllers: [OrdersController],
  providers: [OrdersService, InvoicesService],
})
export class AppModule {}
