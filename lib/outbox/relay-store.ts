import { runSql } from './sql.js';

/** A connection of a `pg` Pool: what the relay claims rows on. */
export interface OutboxPoolClient {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
  /** Returns the connection to the pool; a truthy argument destroys it instead. */
  release(destroy?: boolean | Error): void;
  /** pg emits 'error' on a connection the server dropped; without a listener that would end the process. */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A `pg` Pool (or anything that lends connections the same way). */
export interface OutboxPool {
  connect(): Promise<OutboxPoolClient>;
}

/** Runs `work` on a connection of `pool`, given back afterwards. */
export async function withConnection<T>(
  pool: OutboxPool,
  work: (connection: OutboxPoolClient) => Promise<T>,
): Promise<T> {
  const connection = await pool.connect();
  const dropped = () => undefined; // a dropped connection surfaces as the query's rejection
  connection.on?.('error', dropped);
  try {
    return await work(connection);
  } finally {
    connection.off?.('error', dropped);
    connection.release();
  }
}

/** One pending row, claimed (locked) by the relay's transaction. */
export interface OutboxRow {
  seq: string;
  messageId: string;
  topic: string;
  partitionKey: string | null;
  body: Buffer;
  attempts: number;
  /** Extra Pulsar properties stored with the row (a fired schedule's `bq-schedule-*`); empty when none. */
  headers: Record<string, string>;
  /** The sequence id stamped for a deduplicating relay (relay-dedup.ts); null for a relay without deduplication. */
  dedupSequence: string | null;
}

interface RawRow {
  seq: string | number;
  message_id: string;
  topic: string;
  partition_key: string | null;
  body: Buffer | Uint8Array | string;
  attempts: number;
  headers?: unknown;
  dedup_sequence?: string | number | null;
  /** Only in a deduplicating relay's claim: whether the row's backoff is over. */
  due?: boolean;
}

/** A claim: the rows are locked until commit() (or until the connection dies, when they are free again). */
export interface OutboxClaim {
  rows: OutboxRow[];
  markPublished(seqs: string[]): Promise<void>;
  /**
   * Due again after `retryInMs`. A deduplicating relay's row keeps its stamp when `keepStamp` (no later id of the
   * pass went out: the copy sent again with the same id is dropped if the broker had stored it), else loses it.
   */
  markFailed(seq: string, error: string, retryInMs: number, keepStamp?: boolean): Promise<void>;
  /** No longer tried: `parked_at` set, never due again until re-queued (see parked.ts). */
  markParked(seq: string, error: string): Promise<void>;
  /** Whether the table has the `parked_at` column (a table created before parking existed has not). */
  canPark(): Promise<boolean>;
  commit(): Promise<void>;
  /** Ends the claim without marking anything (the rows stay pending). */
  abandon(error?: unknown): Promise<void>;
}

/** PostgreSQL's SQLSTATE for a column that does not exist. */
const UNDEFINED_COLUMN = '42703';

const toBuffer = (body: RawRow['body']): Buffer =>
  Buffer.isBuffer(body) ? body : typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);

/** The string values of a row's `headers` (jsonb); anything else in it is ignored, never published. */
function stringHeaders(headers: unknown): Record<string, string> {
  const kept: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return kept;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === 'string' && key !== '') kept[key] = value;
  }
  return kept;
}

/**
 * Whether the table has the `headers` column (outboxHeadersMigrationSql): a table created before it existed has
 * not, and the relay then claims without it.
 */
export function outboxHasHeaders(pool: OutboxPool, table: string): Promise<boolean> {
  return withConnection(pool, async (connection) => {
    try {
      await connection.query(`SELECT headers FROM ${table} WHERE false`);
      return true;
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== UNDEFINED_COLUMN) throw error;
      return false;
    }
  });
}

/**
 * Claims up to `limit` due rows, oldest first, with `FOR UPDATE SKIP LOCKED`: a row another relay holds is
 * skipped, so two relays never publish one row at the same time. The lock lasts the claim's transaction. With
 * `dedupProducer`, only the rows stamped for that producer are claimed, lowest sequence id first (the broker
 * drops an id not above the last one it stored for the name), and a row that fails loses its stamp: it is
 * stamped anew, above every id sent since, before it is tried again. Those rows are claimed with a plain
 * `FOR UPDATE`: another relay's stamping statement may hold one of them for a moment (it locks what it scans), and
 * skipping it would send the ids after it first, so the broker would drop it once sent.
 */
export async function claimOutboxRows(
  pool: OutboxPool,
  table: string,
  limit: number,
  withHeaders = false,
  dedupProducer?: string,
): Promise<OutboxClaim> {
  const connection = await pool.connect();
  let open = true;
  // A dropped connection surfaces as the next query's rejection; the event itself only needs a listener.
  const dropped = () => undefined;
  connection.on?.('error', dropped);
  const finish = (destroy?: unknown) => {
    if (!open) return;
    open = false;
    connection.off?.('error', dropped);
    connection.release(destroy ? (destroy instanceof Error ? destroy : true) : undefined);
  };
  try {
    await connection.query('BEGIN');
    const columns = `seq, message_id, topic, partition_key, body, attempts${withHeaders ? ', headers' : ''}`;
    const raw = (await runSql(
      connection,
      dedupProducer === undefined
        ? `SELECT ${columns} FROM ${table}
            WHERE published_at IS NULL AND next_attempt_at <= now()
            ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`
        : `SELECT ${columns}, dedup_sequence, next_attempt_at <= now() AS due FROM ${table}
            WHERE published_at IS NULL AND dedup_producer = $2
            ORDER BY dedup_sequence LIMIT $1 FOR UPDATE`,
      dedupProducer === undefined ? [limit] : [limit, dedupProducer],
    )) as RawRow[];
    // A stamped row waiting out its backoff holds back the ids above it: sent first, they would get it dropped.
    const waiting = raw.findIndex((row) => row.due === false);
    if (waiting !== -1) raw.splice(waiting);
    const unstamp = dedupProducer === undefined ? '' : ', dedup_producer = NULL, dedup_sequence = NULL';
    const rows = raw.map((row) => ({
      seq: String(row.seq),
      messageId: row.message_id,
      topic: row.topic,
      partitionKey: row.partition_key,
      body: toBuffer(row.body),
      attempts: Number(row.attempts),
      headers: stringHeaders(row.headers),
      dedupSequence:
        row.dedup_sequence === null || row.dedup_sequence === undefined ? null : String(row.dedup_sequence),
    }));
    return {
      rows,
      async markPublished(seqs) {
        if (seqs.length === 0) return;
        await connection.query(
          `UPDATE ${table} SET published_at = now(), last_error = NULL WHERE seq = ANY($1::bigint[])`,
          [seqs],
        );
      },
      async markFailed(seq, error, retryInMs, keepStamp = false) {
        await connection.query(
          `UPDATE ${table} SET attempts = attempts + 1, last_error = $2${keepStamp ? '' : unstamp},
             next_attempt_at = now() + ($3::integer * interval '1 millisecond') WHERE seq = $1::bigint`,
          [seq, error.slice(0, 2000), Math.ceil(retryInMs)],
        );
      },
      async markParked(seq, error) {
        // 'infinity' keeps the row out of the due scan (and at the end of its index) without a new predicate,
        // so the claim works the same on tables created before parking existed.
        await connection.query(
          `UPDATE ${table} SET attempts = attempts + 1, last_error = $2, parked_at = now(),
             next_attempt_at = 'infinity'${unstamp} WHERE seq = $1::bigint`,
          [seq, error.slice(0, 2000)],
        );
      },
      async canPark() {
        // Asked inside the claim's transaction: a savepoint keeps a missing column from aborting it.
        await connection.query('SAVEPOINT bq_outbox_probe');
        try {
          await connection.query(`SELECT parked_at FROM ${table} WHERE false`);
          await connection.query('RELEASE SAVEPOINT bq_outbox_probe');
          return true;
        } catch (error) {
          if ((error as { code?: unknown } | null)?.code !== UNDEFINED_COLUMN) throw error;
          await connection.query('ROLLBACK TO SAVEPOINT bq_outbox_probe');
          return false;
        }
      },
      async commit() {
        try {
          await connection.query('COMMIT');
          finish();
        } catch (error) {
          finish(error);
          throw error;
        }
      },
      async abandon(error) {
        if (!open) return;
        try {
          await connection.query('ROLLBACK');
          finish();
        } catch {
          finish(error ?? true);
        }
      },
    };
  } catch (error) {
    try {
      await connection.query('ROLLBACK');
    } catch {
      // the connection is gone; destroying it below is all that is left to do
    }
    finish(error);
    throw error;
  }
}
