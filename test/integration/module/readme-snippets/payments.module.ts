// README snippet: your own rule of which failures are worth a retry (docs/pulsar-features.md).
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelQueueModule } from '../../../../lib/index.js';

/** What the payment gateway's client throws: its HTTP status tells whether trying again can help. */
export class GatewayError extends Error {
  constructor(readonly status: number) {
    super(`payment gateway answered ${status}`);
  }
}
export class CardDeclinedError extends Error {}

@Injectable()
export class Gateway {
  readonly calls: number[] = [];
  charge(orderId: number, answer: number | 'declined'): void {
    this.calls.push(orderId);
    if (answer === 'declined') throw new CardDeclinedError(`card of order ${orderId} declined`);
    if (answer !== 200) throw new GatewayError(answer);
  }
}

@Controller()
export class CaptureController {
  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  // Asked first: a declined card will be declined again. `undefined` leaves the rest to the module's rule.
  @BabelHandler('urn:babel:payments:capture', {
    isRetriable: (error) => (error instanceof CardDeclinedError ? false : undefined),
  })
  capture(@Payload() data: { order_id: number; answer: number | 'declined' }): void {
    this.gateway.charge(data.order_id, data.answer);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.CAPTURE_TOPIC ?? 'captures',
      consumer: {
        maxAttempts: 3,
        // A 5xx of the gateway is worth a retry, a 4xx is not; for anything else (undefined) the built-in rule
        // decides: BabelNonRetriableError, a 4xx HttpException and a guard's denial are not retried.
        isRetriable: (error) => (error instanceof GatewayError ? error.status >= 500 : undefined),
      },
    }),
  ],
  controllers: [CaptureController],
  providers: [Gateway],
})
export class PaymentsModule {}
