import { BabelQueueError } from '../envelope/index.js';
import { withConnection, type OutboxPool } from './relay-store.js';
import { runSql } from './sql.js';
import { checkOutboxTable } from './table.js';

/** A row the relay gave up on: kept with the error that parked it, never tried again until re-queued. */
export interface ParkedOutboxRow {
  seq: string;
  /** The envelope's `meta.id`. */
  messageId: string;
  topic: string;
  partitionKey: string | null;
  attempts: number;
  /** Why it was parked (the last failure). */
  error: string | null;
  createdAt: Date;
  parkedAt: Date;
}

export interface ParkedOutboxListing {
  /** How many rows are parked in the table. */
  total: number;
  /** The oldest of them, up to the limit. */
  rows: ParkedOutboxRow[];
}

/** Which parked rows to re-queue: those with these `meta.id`s, or all of them (`all: true`); `topic` narrows. */
export interface OutboxRequeueSelection {
  ids?: readonly string[];
  all?: boolean;
  topic?: string;
}

interface RawParked {
  seq: string | number;
  message_id: string;
  topic: string;
  partition_key: string | null;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  parked_at: Date;
}

/** The parked rows of `table`, oldest first (at most `limit`, default 100), and how many there are. */
export async function listParkedOutboxRows(
  pool: OutboxPool,
  options: { table?: string; limit?: number } = {},
): Promise<ParkedOutboxListing> {
  const table = checkOutboxTable(options.table, 'options.table');
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1) throw new BabelQueueError(`limit must be an integer >= 1, got ${limit}`);
  return withConnection(pool, async (connection) => {
    const where = `WHERE parked_at IS NOT NULL AND published_at IS NULL`;
    const [count] = (await runSql(connection, `SELECT count(*) AS total FROM ${table} ${where}`, [])) as Array<{
      total: string | number;
    }>;
    const rows = (await runSql(
      connection,
      `SELECT seq, message_id, topic, partition_key, attempts, last_error, created_at, parked_at FROM ${table}
        ${where} ORDER BY seq LIMIT $1`,
      [limit],
    )) as RawParked[];
    return {
      total: Number(count?.total ?? 0),
      rows: rows.map((row) => ({
        seq: String(row.seq),
        messageId: row.message_id,
        topic: row.topic,
        partitionKey: row.partition_key,
        attempts: Number(row.attempts),
        error: row.last_error,
        createdAt: row.created_at,
        parkedAt: row.parked_at,
      })),
    };
  });
}

/**
 * Puts the selected parked rows back in the queue: pending again, due now, with a fresh attempt budget (their
 * last error is kept until they are published). Resolves to the `meta.id`s re-queued. Fix what parked them first
 * (create the topic, raise the broker's size limit), or they are parked again after the same attempts.
 */
export async function requeueParkedOutboxRows(
  pool: OutboxPool,
  selection: OutboxRequeueSelection & { table?: string },
): Promise<string[]> {
  const table = checkOutboxTable(selection.table, 'options.table');
  const ids = selection.ids === undefined ? undefined : [...selection.ids];
  if (ids !== undefined && (ids.length === 0 || ids.some((id) => typeof id !== 'string' || id.trim() === ''))) {
    throw new BabelQueueError('ids must be a non-empty list of meta.ids');
  }
  if ((ids === undefined) === (selection.all !== true)) {
    throw new BabelQueueError('say which parked rows to re-queue: { ids: [...] } or { all: true }, not both');
  }
  if (selection.topic !== undefined && (typeof selection.topic !== 'string' || selection.topic.trim() === '')) {
    throw new BabelQueueError('topic must be a non-blank topic name');
  }
  const conditions = ['parked_at IS NOT NULL', 'published_at IS NULL'];
  const parameters: unknown[] = [];
  if (ids !== undefined) {
    parameters.push(ids.map((id) => id.trim()));
    conditions.push(`message_id = ANY($${parameters.length}::text[])`);
  }
  if (selection.topic !== undefined) {
    parameters.push(selection.topic.trim());
    conditions.push(`topic = $${parameters.length}`);
  }
  return withConnection(pool, async (connection) => {
    const rows = (await runSql(
      connection,
      `UPDATE ${table} SET parked_at = NULL, attempts = 0, next_attempt_at = now()
        WHERE ${conditions.join(' AND ')} RETURNING message_id`,
      parameters,
    )) as Array<{ message_id: string }>;
    return rows.map((row) => row.message_id);
  });
}
