// README snippet: consuming. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Controller, Injectable, Logger } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler } from '../../../../lib/index.js';

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

// @BabelHandler methods live on controllers (Nest only scans controllers for message handlers).
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
