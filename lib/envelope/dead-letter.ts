import { BabelQueueError } from './errors.js';
import { EnvelopeCodec } from './codec.js';
import { errorMessage } from './error-text.js';
import type { DeadLetterBlock, Envelope } from './types.js';

export type DeadLetterReason = 'failed' | 'unknown_urn' | 'poison';

export interface DeadLetterRecordInput {
  reason: 'failed' | 'unknown_urn';
  error: unknown;
  attempts: number;
  /** Fallback for `original_queue` when `meta.queue` is empty: the bare topic name. */
  originalQueue: string;
  failedAt?: number;
}

export interface DeadLetterPropertiesInput {
  reason: DeadLetterReason;
  error: unknown;
  attempts: number;
  originalQueue: string;
  failedAt: number;
  /**
   * The full name of the topic the message was consumed from, recorded as `bq-dead-letter-topic`: where a
   * redrive sends it back by default (the body's `original_queue` is `meta.queue`, which the publisher chose).
   */
  consumedTopic?: string | undefined;
}

/** The property naming the topic a dead-letter record was consumed from (written by this library). */
export const DEAD_LETTER_TOPIC_PROPERTY = 'bq-dead-letter-topic';

/** The language this SDK writes into `dead_letter.lang` and `bq-dead-letter-lang`. */
export const DEAD_LETTER_LANG = 'node';

/** Type name of a thrown value (`error.name`, as the Node adapters report it); null when it has none. */
export function errorName(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && typeof (error as { name?: unknown }).name === 'string') {
    return (error as { name: string }).name;
  }
  return null;
}

/**
 * The dead-letter record (docs/contract.md#dead-letter-records): a copy of the envelope with `attempts` = the counted attempt and the `dead_letter`
 * block (keys in the emitted order). Everything else, unknown keys and exact numbers included,
 * is carried unchanged; an earlier `dead_letter` is replaced.
 */
export function deadLetterRecord(envelope: Envelope, input: DeadLetterRecordInput): Envelope {
  if (input.reason !== 'failed' && input.reason !== 'unknown_urn') {
    throw new BabelQueueError(
      `a dead-letter record's reason is 'failed' or 'unknown_urn', got ${JSON.stringify(input.reason)}`,
    );
  }
  const copy = EnvelopeCodec.withAttempts(envelope, input.attempts);
  const meta = envelope.meta as unknown;
  const metaQueue = typeof meta === 'object' && meta !== null ? (meta as { queue?: unknown }).queue : undefined;
  const block: DeadLetterBlock = {
    reason: input.reason,
    error: errorMessage(input.error),
    exception: errorName(input.error),
    failed_at: input.failedAt ?? Date.now(),
    original_queue: typeof metaQueue === 'string' && metaQueue !== '' ? metaQueue : input.originalQueue,
    attempts: input.attempts,
    lang: DEAD_LETTER_LANG,
  };
  copy.dead_letter = block;
  return copy;
}

/** The `bq-dead-letter-*` properties of every dead-letter record (an empty error message is left out). */
export function deadLetterProperties(input: DeadLetterPropertiesInput): Record<string, string> {
  const properties: Record<string, string> = { 'bq-dead-letter-reason': input.reason };
  const message = errorMessage(input.error);
  if (message !== null && message !== '') properties['bq-dead-letter-error'] = message;
  properties['bq-dead-letter-attempts'] = String(input.attempts);
  properties['bq-dead-letter-original-queue'] = input.originalQueue;
  properties['bq-dead-letter-failed-at'] = String(input.failedAt);
  properties['bq-dead-letter-lang'] = DEAD_LETTER_LANG;
  if (input.consumedTopic !== undefined) properties[DEAD_LETTER_TOPIC_PROPERTY] = input.consumedTopic;
  return properties;
}

/** Last path segment of a topic: 'persistent://public/default/orders' → 'orders' (trailing '/' ignored). */
export function bareTopicName(topic: string): string {
  let end = topic.length;
  while (end > 0 && topic.charCodeAt(end - 1) === 0x2f) end--;
  return topic.slice(topic.lastIndexOf('/', end - 1) + 1, end);
}
