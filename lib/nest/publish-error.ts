import { BabelQueueError } from '../envelope/index.js';
import { errorText } from '../error-text.js';

// Failures that happen before the broker could have stored anything. Codes of the WebSocket client, and the
// result names the native client puts in its messages.
const NEVER_STORED =
  /\b(MessageTooBig|AlreadyClosed|InvalidArgument|InvalidTopic|InvalidMessage|SendError|ProducerQueueIsFull|ProducerBlockedQuota\w*|TopicTerminated)\b/;

/**
 * Whether a failed send may still have been stored by the broker (pure). Only failures known to happen
 * before or instead of storing say no; anything else (a lost connection, a time-out, an unknown error)
 * may have been stored, so a retry should reuse the message id for consumers to deduplicate.
 */
export function mayHaveBeenStored(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const text = `${typeof code === 'string' ? code : ''} ${errorText(error)}`;
  return !NEVER_STORED.test(text);
}

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
