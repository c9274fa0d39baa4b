import { isReceiveTimeout } from '../pulsar/receive-timeout.js';
import type { PulsarClientLike, PulsarConsumer, PulsarMessage } from '../pulsar/client-types.js';
import { DEFAULT_REDRIVE_SUBSCRIPTION, subscribeToDeadLetters } from '../consumer/keep-dead-letters.js';

export { DEFAULT_REDRIVE_SUBSCRIPTION, subscribeToDeadLetters };

export const DEFAULT_IDLE_TIMEOUT_MS = 1000;

export interface DeadLetterReadOptions {
  /** The fully qualified dead-letter topic. */
  topic: string;
  /** Default `babelqueue-redrive`. */
  subscription?: string | undefined;
  /** Read at most this many records. */
  max?: number | undefined;
  /** How long an empty DLQ is waited on before the read ends, ms (default 1000). */
  idleTimeoutMs?: number | undefined;
}

/** The next record, or null once the DLQ stayed empty for `idleMs`. */
export async function receiveOrIdle(consumer: PulsarConsumer, idleMs: number): Promise<PulsarMessage | null> {
  try {
    return await consumer.receive(idleMs);
  } catch (error) {
    // Both clients report an empty wait as a time-out error; anything else is real.
    if (isReceiveTimeout(error)) return null;
    throw error;
  }
}

/**
 * Reads the DLQ's backlog in order and hands each record to `visit`, acknowledging those it returns true for.
 * Everything else is left exactly where it is: closing the consumer gives unacknowledged records back.
 */
export async function readDeadLetters(
  client: PulsarClientLike,
  options: DeadLetterReadOptions,
  visit: (message: PulsarMessage) => boolean | Promise<boolean>,
): Promise<number> {
  const consumer = await subscribeToDeadLetters(client, options);
  let read = 0;
  try {
    while (options.max === undefined || read < options.max) {
      const message = await receiveOrIdle(consumer, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
      if (!message) break;
      read++;
      if (await visit(message)) await consumer.acknowledge(message);
    }
  } finally {
    await consumer.close().catch(() => undefined);
  }
  return read;
}
