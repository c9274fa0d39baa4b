import { BabelQueueError } from '../envelope/index.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import type { OutboxPool } from './relay-store.js';
import { outboxDedupSequenceName } from './table.js';

/**
 * A relay the broker deduplicates (docs/exactly-once.md#a-relay-the-broker-deduplicates): its producers carry a
 * stable name, and each row goes out with a sequence id stamped on it before it is sent. With deduplication on for
 * the topic's namespace, the broker drops a row sent again after a crash instead of storing it twice.
 */
export interface OutboxRelayDeduplication {
  /**
   * The name of this relay's producers, the same after every restart and different for every relay on one table
   * (two producers of one name on a topic are refused by the broker): e.g. the service and its instance ordinal.
   */
  producerName: string;
  /** The client the relay's own named producers are created on (the module's, or `new Pulsar.Client(...)`). */
  client: PulsarClientLike;
  /**
   * Rows another relay stamped and has not passed over within this time (it stopped, or its name changed) are
   * stamped again by this one; a running relay renews its stamps. Its copy may then be a duplicate: the broker
   * knows ids per producer name.
   * @defaultValue `60000`
   */
  takeOverAfterMs?: number;
}

export const DEFAULT_TAKE_OVER_AFTER_MS = 60_000;

/** PostgreSQL's SQLSTATE for a column that does not exist, and for a relation (the sequence) that does not exist. */
const MISSING = new Set(['42703', '42P01']);

export function checkDeduplication(value: unknown): Required<OutboxRelayDeduplication> {
  const given = value as Partial<OutboxRelayDeduplication> | null;
  if (typeof given !== 'object' || given === null) {
    throw new BabelQueueError('OutboxRelay options.deduplication must be { producerName, client }');
  }
  if (typeof given.producerName !== 'string' || given.producerName.trim() === '') {
    throw new BabelQueueError(
      `OutboxRelay options.deduplication.producerName must be a non-empty string that stays the same across restarts, got ${JSON.stringify(given.producerName)}`,
    );
  }
  if (typeof given.client?.createProducer !== 'function') {
    throw new BabelQueueError('OutboxRelay options.deduplication.client must be a Pulsar client (createProducer)');
  }
  const takeOver = given.takeOverAfterMs ?? DEFAULT_TAKE_OVER_AFTER_MS;
  if (!Number.isInteger(takeOver) || takeOver < 0) {
    throw new BabelQueueError(
      `OutboxRelay options.deduplication.takeOverAfterMs must be an integer >= 0, got ${JSON.stringify(takeOver)}`,
    );
  }
  return { producerName: given.producerName, client: given.client, takeOverAfterMs: takeOver };
}

/**
 * Stamps due rows for `producerName` until it holds `limit` unsent ones (a batch): the rows nobody stamped and those
 * another relay stamped (or last renewed) more than `takeOverAfterMs` ago, oldest first; so no relay holds more than a batch that the
 * others cannot take. One autocommitted statement, so the stamps survive a crash of the relay
 * that follows: the rows it had sent go out again with the same ids, and the broker drops them. Rows another relay
 * holds right now (its claim's row locks) are skipped. Resolves to how many rows were stamped.
 */
export async function stampOutboxRows(
  pool: OutboxPool,
  table: string,
  producerName: string,
  limit: number,
  takeOverAfterMs: number,
): Promise<number> {
  const connection = await pool.connect();
  const dropped = () => undefined;
  connection.on?.('error', dropped);
  try {
    // A live relay renews the stamps it holds, so another relay takes over only the rows of one that stopped: a
    // send of a live relay may be stored late (its producer still holds it across a broker outage, reconnecting),
    // and a copy under another name would be stored too. Renewed once a quarter of the wait has passed, not every pass.
    await connection.query(
      `UPDATE ${table} SET dedup_stamped_at = now()
        WHERE dedup_producer = $1 AND published_at IS NULL
          AND dedup_stamped_at < now() - ($2::integer * interval '1 millisecond')`,
      [producerName, Math.floor(takeOverAfterMs / 4)],
    );
    // nextval in seq order: the ids follow the rows' age, and they rise above every id this name was given before.
    const result = (await connection.query(
      `UPDATE ${table} AS o SET dedup_producer = $1, dedup_sequence = s.id, dedup_stamped_at = now()
         FROM (
           SELECT seq, nextval('${outboxDedupSequenceName(table)}') AS id FROM (
             SELECT seq FROM ${table}
              WHERE published_at IS NULL AND next_attempt_at <= now()
                AND (dedup_producer IS NULL
                     OR (dedup_producer <> $1 AND dedup_stamped_at < now() - ($3::integer * interval '1 millisecond')))
              ORDER BY seq
              LIMIT GREATEST(0, $2 - (SELECT count(*) FROM ${table} WHERE dedup_producer = $1 AND published_at IS NULL))
              FOR UPDATE SKIP LOCKED
           ) AS due ORDER BY seq
         ) AS s
        WHERE o.seq = s.seq`,
      [producerName, limit, takeOverAfterMs],
    )) as { rowCount?: number | null };
    return result.rowCount ?? 0;
  } catch (error) {
    if (MISSING.has(String((error as { code?: unknown } | null)?.code))) {
      throw new BabelQueueError(
        `outbox table ${table} has no deduplication columns (or sequence): run outboxMigrationSql() again ` +
          '(it adds them), or outboxDeduplicationMigrationSql() from @babelqueue/nestjs-pulsar/outbox',
        { cause: error },
      );
    }
    throw error;
  } finally {
    connection.off?.('error', dropped);
    connection.release();
  }
}
