import type { PulsarClientLike } from '../pulsar/client-types.js';
import { decodeDeadLetter, type DeadLetterView } from './dead-letter-view.js';
import { readDeadLetters, type DeadLetterReadOptions } from './read-dead-letters.js';
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
    byUrn: {},
    byReason: {},
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
 * Records that are not selected are not touched: purge writes nothing, so they keep their ids and places.
 */
export async function purgeDeadLetters(client: PulsarClientLike, options: PurgeOptions): Promise<PurgeResult> {
  const read = readOptions(options);
  const now = Date.now();
  const dryRun = options.yes !== true;
  const records: DeadLetterView[] = [];
  let purged = 0;
  const count = await readDeadLetters(client, read, (message) => {
    const { view } = decodeDeadLetter(message, now);
    if (!isSelected(view, options)) return false;
    records.push(view);
    if (dryRun) return false;
    purged++;
    return true;
  });
  return { topic: read.topic, read: count, records, purged, dryRun };
}
