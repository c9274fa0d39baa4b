import type { PulsarClientLike, PulsarMessage } from '../pulsar/client-types.js';
import { BatchTracker, readRestOfBatch } from './batches.js';
import { lazyProducer, putBack } from './put-back.js';
import { decodeDeadLetter, type DeadLetterView } from './dead-letter-view.js';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  readDeadLetters,
  receiveOrIdle,
  subscribeToDeadLetters,
  type DeadLetterReadOptions,
} from './read-dead-letters.js';
import { checkSelection, isSelected, type DeadLetterSelection } from './selection.js';
import { deadLetterTopicName } from './topic-name.js';

export interface BrowseOptions extends Omit<DeadLetterReadOptions, 'topic'>, DeadLetterSelection {
  /** The dead-letter topic, e.g. `orders.dlq`. */
  topic: string;
}

export interface DeadLetterListing {
  topic: string;
  /** Records read (selected or not). */
  read: number;
  /** The selected ones, in DLQ order. */
  records: DeadLetterView[];
}

export interface DeadLetterStats {
  topic: string;
  /** Records read (selected or not). */
  read: number;
  /** Selected records. */
  total: number;
  byUrn: Record<string, number>;
  byReason: Record<string, number>;
  /** `failed_at` of the oldest selected record, epoch ms; null when none. */
  oldestFailedAt: number | null;
}

export interface PurgeOptions extends BrowseOptions {
  /** Acknowledge the selected records (default: a dry run that only reports them). */
  yes?: boolean;
}

export interface PurgeResult extends DeadLetterListing {
  /** Records acknowledged (removed); 0 on a dry run. */
  purged: number;
  /**
   * Message ids of the copies of records that were not selected but shared a Pulsar batch with a purged one,
   * put back at the end of the DLQ.
   */
  putBack: string[];
  dryRun: boolean;
}

function readOptions(options: BrowseOptions): DeadLetterReadOptions {
  checkSelection(options);
  return {
    topic: deadLetterTopicName(options.topic),
    subscription: options.subscription,
    max: options.max,
    idleTimeoutMs: options.idleTimeoutMs,
  };
}

/** The selected records, read without acknowledging anything (their ids and places stay as they are). */
export async function listDeadLetters(client: PulsarClientLike, options: BrowseOptions): Promise<DeadLetterListing> {
  const read = readOptions(options);
  const now = Date.now();
  const records: DeadLetterView[] = [];
  const count = await readDeadLetters(client, read, (message) => {
    const { view } = decodeDeadLetter(message, now);
    if (isSelected(view, options)) records.push(view);
    return false;
  });
  return { topic: read.topic, read: count, records };
}

/** Counts by URN and reason of the selected records (read-only, as listDeadLetters). */
export async function deadLetterStats(client: PulsarClientLike, options: BrowseOptions): Promise<DeadLetterStats> {
  const listing = await listDeadLetters(client, options);
  return statsOf(listing);
}

export function statsOf(listing: DeadLetterListing): DeadLetterStats {
  const stats: DeadLetterStats = {
    topic: listing.topic,
    read: listing.read,
    total: listing.records.length,
    // No prototype: a URN or reason such as `constructor` or `__proto__` is a key like any other.
    byUrn: Object.create(null) as Record<string, number>,
    byReason: Object.create(null) as Record<string, number>,
    oldestFailedAt: null,
  };
  for (const record of listing.records) {
    const urn = record.urn || '(none)';
    const reason = record.reason || '(none)';
    stats.byUrn[urn] = (stats.byUrn[urn] ?? 0) + 1;
    stats.byReason[reason] = (stats.byReason[reason] ?? 0) + 1;
    if (stats.oldestFailedAt === null || record.failedAt < stats.oldestFailedAt) stats.oldestFailedAt = record.failedAt;
  }
  return stats;
}

/**
 * Removes the selected records for good (acknowledges them on the DLQ subscription). A dry run unless `yes`.
 * Purge writes nothing for the records it does not select — they keep their ids and places — except for one
 * that shares a Pulsar batch with a purged record: Pulsar acknowledges a batch as a whole, so that one is put
 * back at the end of the DLQ (byte for byte) before the batch is acknowledged, or the purged record would return.
 */
export async function purgeDeadLetters(client: PulsarClientLike, options: PurgeOptions): Promise<PurgeResult> {
  const read = readOptions(options);
  const idleMs = read.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const now = Date.now();
  const dryRun = options.yes !== true;
  const result: PurgeResult = { topic: read.topic, read: 0, records: [], purged: 0, putBack: [], dryRun };
  const batches = new BatchTracker();
  const producer = lazyProducer(() => client.createProducer({ topic: read.topic, batchingEnabled: false }));
  const consumer = await subscribeToDeadLetters(client, read);
  let last: PulsarMessage | null = null;
  try {
    while (read.max === undefined || result.read < read.max) {
      const message = await receiveOrIdle(consumer, idleMs);
      if (!message) break;
      result.read++;
      last = message;
      const { view } = decodeDeadLetter(message, now);
      const selected = isSelected(view, options);
      if (selected) result.records.push(view);
      if (selected && !dryRun) {
        await consumer.acknowledge(message);
        result.purged++;
      }
      batches.note(message, selected && !dryRun);
    }
    if (dryRun) return result;
    if (last && result.read === read.max)
      for (const message of await readRestOfBatch(consumer, last, idleMs)) batches.note(message, false);
    for (const message of batches.leftovers()) {
      result.putBack.push(await putBack(producer.get(), message));
      await consumer.acknowledge(message);
    }
    return result;
  } finally {
    await producer.close();
    await consumer.close().catch(() => undefined);
  }
}
