// README snippet: BabelQueueModule.forRoot. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { Module } from '@nestjs/common';
import { BabelQueueModule } from '../../../../lib/index.js';
import { InvoicesService, OrdersController } from './orders.controller.js';
import { OrdersService } from './orders.service.js';

@Module({
  imports: [
    BabelQueueModule.forRoot({
      // pulsar:// or pulsar+ssl:// → the native pulsar-client package (npm install pulsar-client);
      // http(s):// or ws(s):// (the broker's web port) → the built-in WebSocket client.
      serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650',
      topic: process.env.ORDERS_TOPIC ?? 'orders', // publish here by default, and consume it
      consumer: { subscription: 'billing', maxAttempts: 3, concurrency: 4 }, // dead letters go to <topic>.dlq
    }),
  ],
  controllers: [OrdersController],
  providers: [OrdersService, InvoicesService],
})
export class AppModule {}
