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

/** A receive under way that outlived its wait: the next call takes its message, so that none is skipped. */
const underWay = new WeakMap<PulsarConsumer, Promise<PulsarMessage>>();

/**
 * The next record, or null once the DLQ stayed empty for `idleMs`. The receive itself has no time-out (a native
 * receive with one holds a libuv pool thread while it waits): the wait is a timer here, a receive that outlives it is
 * kept for the next call, and closing the consumer ends it (its message, unacknowledged, stays in the DLQ).
 */
export async function receiveOrIdle(consumer: PulsarConsumer, idleMs: number): Promise<PulsarMessage | null> {
  let next = underWay.get(consumer);
  if (!next) {
    next = consumer.receive();
    next.catch(() => undefined);
    underWay.set(consumer, next);
  }
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), idleMs);
  });
  try {
    const message = await Promise.race([next, idle]);
    if (message !== null) underWay.delete(consumer);
    return message;
  } catch (error) {
    underWay.delete(consumer);
    throw error;
  } finally {
    clearTimeout(timer);
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
