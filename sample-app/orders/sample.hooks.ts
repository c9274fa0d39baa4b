import { Injectable, Logger } from '@nestjs/common';
import {
  SchemaVersionRejectedError,
  type BabelQueueHooks,
  type DeadLetterWrite,
  type PulsarMessage,
} from '@babelqueue/nestjs-pulsar';
import { OrdersStore } from './orders.store.js';

/** Settlement hooks resolved through DI, so they can use other services (here the store). */
@Injectable()
export class SampleHooks implements BabelQueueHooks {
  private readonly logger = new Logger('BabelQueueHooks');

  constructor(private readonly store: OrdersStore) {}

  onError(error: Error, _envelope: unknown, message: PulsarMessage): void {
    if (error instanceof SchemaVersionRejectedError) {
      // The body was never decoded; the bq-message-id property still says which message it was.
      const messageId = message.getProperties()['bq-message-id'] ?? null;
      this.store.rejected.push({ error: error.message, messageId, at: Date.now() });
    }
  }

  onDeadLetter(record: DeadLetterWrite): void {
    this.logger.warn(`dead-lettered to ${record.topic} (${record.reason})`);
  }
}
