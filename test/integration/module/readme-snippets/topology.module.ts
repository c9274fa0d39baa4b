// README snippet: topology. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Controller, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueModule,
  getBabelServerToken,
  InjectBabelClient,
} from '../../../../lib/index.js';

const PAYMENTS = process.env.PAYMENTS_TOPIC ?? 'payments';
const LEDGER = process.env.LEDGER_TOPIC ?? 'ledger';

@Injectable()
export class LedgerService {
  // The 'ledger' registration's client: its own connection and default topic.
  constructor(@InjectBabelClient('ledger') private readonly ledger: BabelPulsarClient) {}

  record(orderId: number, amount: number): Promise<string> {
    return this.ledger.publish('urn:babel:ledger:entry', { order_id: orderId, amount });
  }
}

@Controller()
export class PaymentsController {
  readonly refunded: number[] = [];
  readonly entries: number[] = [];

  // Its own topic and subscription, consumed by the unnamed registration's server.
  @BabelHandler('urn:babel:payments:refunded', { topic: PAYMENTS, subscription: 'refunds' })
  onRefund(@Payload('order_id') orderId: number): void {
    this.refunded.push(orderId);
  }

  // Run by the 'ledger' registration's server.
  @BabelHandler('urn:babel:ledger:entry', { connection: 'ledger' })
  onEntry(@Payload('order_id') orderId: number): void {
    this.entries.push(orderId);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({ serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650', topic: PAYMENTS }),
    BabelQueueModule.forRoot({
      name: 'ledger', // another cluster, tenant or settings: a registration of its own
      serviceUrl: process.env.LEDGER_PULSAR_URL ?? process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: LEDGER,
    }),
  ],
  controllers: [PaymentsController],
  providers: [LedgerService],
})
export class PaymentsAppModule {}

/** One server per registration: each consumes its own topics and runs its own handlers. */
export async function bootstrapPayments() {
  const app = await NestFactory.create(PaymentsAppModule);
  app.connectMicroservice({ strategy: app.get(BabelPulsarServer) }, { inheritAppConfig: true });
  app.connectMicroservice({ strategy: app.get(getBabelServerToken('ledger')) }, { inheritAppConfig: true });
  app.enableShutdownHooks();
  await app.startAllMicroservices();
  await app.listen(process.env.PORT ?? 3000);
  return app;
}
