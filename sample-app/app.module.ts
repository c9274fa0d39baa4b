import { Module } from '@nestjs/common';
import { BabelQueueModule } from '@babelqueue/nestjs-pulsar';
import type { SampleConfig } from './config.js';
import { SampleConfigModule } from './config.module.js';
import { DeadLetterReader } from './orders/dead-letter.reader.js';
import { OrderHandlers } from './orders/order-handlers.controller.js';
import { OrdersHttpController } from './orders/orders.http.controller.js';
import { OrdersStore } from './orders/orders.store.js';
import { SampleHooks } from './orders/sample.hooks.js';
import { SettlementRecorder } from './orders/settlement.recorder.js';
import { SAMPLE_CONFIG } from './tokens.js';

@Module({
  imports: [
    SampleConfigModule,
    BabelQueueModule.forRootAsync({
      isGlobal: true,
      inject: [SAMPLE_CONFIG],
      useFactory: (config: SampleConfig) => ({
        serviceUrl: config.serviceUrl,
        topic: config.topic,
        consumer: { maxAttempts: 3, concurrency: 4 },
        hooks: SampleHooks,
      }),
    }),
  ],
  controllers: [OrdersHttpController, OrderHandlers],
  providers: [OrdersStore, DeadLetterReader, SampleHooks, SettlementRecorder],
})
export class AppModule {}
