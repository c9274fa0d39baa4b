import { BabelQueueError } from '../../envelope/index.js';
import { errorText } from '../../envelope/error-text.js';

export { mayHaveBeenStored } from '../../pulsar/client-errors.js';
import { mayHaveBeenStored } from '../../pulsar/client-errors.js';

/**
 * A publish the broker did not confirm. `messageId` is the envelope's `meta.id`: pass it back as
 * `publish(urn, data, { id })` to retry without creating a second message when `mayHaveBeenStored` is true.
 */
export class PublishError extends BabelQueueError {
  readonly messageId: string;
  readonly topic: string;
  readonly mayHaveBeenStored: boolean;

  constructor(cause: unknown, messageId: string, topic: string) {
    super(errorText(cause), { cause });
    this.name = 'PublishError';
    this.messageId = messageId;
    this.topic = topic;
    this.mayHaveBeenStored = mayHaveBeenStored(cause);
  }
}
