// README snippet: publishing. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Injectable } from '@nestjs/common';
import { lastValueFrom } from 'rxjs';
import { BabelPulsarClient } from '../../../../lib/index.js';

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
