// Sending one outbox row: the message it becomes (its sequence id when the relay is deduplicated) and the time-out
// after which a send counts as failed, though the producer may still store it.
import { BabelQueueError } from '../envelope/index.js';
import { errorText } from '../envelope/error-text.js';
import type { PulsarProducerMessage } from '../pulsar/client-types.js';
import type { ProducerSource } from '../nest/client/producer-settings.js';
import type { OutboxRow } from './relay-store.js';
import { checkedRowProperties } from './row-check.js';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BabelQueueError(`${what} did not finish within ${ms} ms (TimeOut)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A send that timed out (ours or the client's) may still be stored: the producer keeps it and sends it, in order,
 * once it reconnects. Such a row keeps its id, whatever happened to the rows after it.
 */
export const mayBeStored = (reason: unknown): boolean => /\bTimeOut\b/i.test(errorText(reason));

/** Sends one claimed row as its message, byte for byte, within `timeoutMs`. */
export async function sendRow(producers: ProducerSource, row: OutboxRow, timeoutMs: number): Promise<void> {
  // The row's own headers (a fired schedule's bq-schedule-*) go along; the bq-* six read from the body win.
  const properties = { ...row.headers, ...checkedRowProperties(row.body, row.topic) };
  const message: PulsarProducerMessage = { data: row.body, properties };
  if (row.partitionKey) message.partitionKey = row.partitionKey;
  if (row.dedupSequence !== null) message.sequenceId = Number(row.dedupSequence);
  const what = `publishing outbox row ${row.messageId} to ${row.topic}`;
  await withTimeout(
    producers.producerFor(row.topic).then((producer) => producer.send(message)),
    timeoutMs,
    what,
  );
}
