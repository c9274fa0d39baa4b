import { isUnreachable as isClientUnreachable } from '../pulsar/client-errors.js';
import { BabelQueueError } from '../envelope/index.js';

/** A selector, topic name or option that is wrong before anything is read: the CLI's exit code 2. */
export class DeadLetterUsageError extends BabelQueueError {
  override readonly name = 'DeadLetterUsageError';
}

/** The dead-letter topic does not exist; nothing was created. */
export class DeadLetterTopicMissingError extends BabelQueueError {
  override readonly name = 'DeadLetterTopicMissingError';
  constructor(readonly topic: string) {
    super(
      `dead-letter topic ${topic} does not exist (nothing was created): check the name; ` +
        'the module writes <topic>.dlq unless configured otherwise',
    );
  }
}

/** The broker (its binary port, WebSocket API or admin API) did not answer. */
export class BrokerUnreachableError extends BabelQueueError {
  override readonly name = 'BrokerUnreachableError';
}

/** True when `error` says the broker could not be reached, on either client or from fetch. */
export function isUnreachable(error: unknown): boolean {
  return error instanceof BrokerUnreachableError || isClientUnreachable(error);
}
