// README snippet: BabelQueueModule.forRootAsync with a config service and DI hooks.
// (The README imports from '@babelqueue/nestjs-pulsar' and '@nestjs/config'.)
import { Injectable, Logger, Module } from '@nestjs/common';
import { BabelQueueModule, type BabelQueueHooks, type DeadLetterWrite } from '../../../../lib/index.js';
import { ConfigModule, ConfigService } from './config.js';
import { InvoicesService, OrdersController, OrdersService } from './app.module.js';

@Injectable()
export class AlertsService {
  readonly sent: string[] = [];

  notify(text: string): void {
    this.sent.push(text);
  }
}

/** Hooks as an injectable class: Nest creates it, so it can use other services. */
@Injectable()
export class DeadLetterAlerts implements BabelQueueHooks {
  private readonly logger = new Logger(DeadLetterAlerts.name);

  constructor(private readonly alerts: AlertsService) {}

  onDeadLetter(record: DeadLetterWrite): void {
    this.logger.warn(`dead-lettered (${record.reason}) to ${record.topic}`);
    this.alerts.notify(`a message was dead-lettered (${record.reason})`);
  }
}

@Module({
  imports: [
    ConfigModule.forRoot(),
    BabelQueueModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        serviceUrl: config.getOrThrow<string>('PULSAR_URL'),
        auth: config.get('PULSAR_TOKEN') ? { token: config.getOrThrow<string>('PULSAR_TOKEN') } : undefined,
        topic: config.get('ORDERS_TOPIC', 'orders'),
        consumer: { maxAttempts: Number(config.get('ORDERS_MAX_ATTEMPTS', '3')) },
        hooks: DeadLetterAlerts,
      }),
    }),
  ],
  controllers: [OrdersController],
  providers: [OrdersService, InvoicesService, AlertsService, DeadLetterAlerts],
})
export class AppModule {}
