import { BabelQueueError } from '../envelope/index.js';
import { checkTableName, indexNameOf, queryRows, type SqlQueryable } from '../idempotency/sql-table.js';
import type { Inbox, InboxOutboxWriter, InboxOutcome, InboxPublishOptions, InboxTransaction } from './inbox.js';

export const DEFAULT_INBOX_TABLE = 'babelqueue_inbox';

/** A connection of a pool, as `pg`'s PoolClient has it: `release(error)` destroys a connection left broken. */
export interface InboxConnection extends SqlQueryable {
  release(error?: Error | boolean): void;
  /** `pg`'s literal quoting: when present, BEGIN and the inbox row go to the server in one round trip. */
  escapeLiteral?(value: string): string;
}

/** A pool to take one connection from per delivery (`pg`'s Pool). */
export interface InboxPool {
  connect(): Promise<InboxConnection>;
}

export interface PostgresInboxOptions {
  pool: InboxPool;
  /** The inbox table (see inboxMigrationSql); default `babelqueue_inbox`. */
  table?: string;
  /** Where `ctx.publish()` writes follow-ups, in the handler's transaction (a BabelOutbox). */
  outbox?: InboxOutboxWriter;
}

/**
 * The migration that creates the inbox table: one row per handled message id and subscription. Idempotent (`IF NOT
 * EXISTS`), so it can run at every start or be pasted into a migration tool; the index serves pruning.
 */
export function inboxMigrationSql(table: string = DEFAULT_INBOX_TABLE): string {
  const name = checkTableName(table, DEFAULT_INBOX_TABLE, 'table');
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    '  subscription text NOT NULL,',
    '  message_id text NOT NULL,',
    '  handled_at timestamptz NOT NULL DEFAULT now(),',
    '  PRIMARY KEY (subscription, message_id)',
    ');',
    `CREATE INDEX IF NOT EXISTS ${indexNameOf(name, 'handled')} ON ${name} (handled_at);`,
  ].join('\n');
}

/**
 * The inbox on PostgreSQL. Each delivery takes a connection, begins, and inserts its (subscription, id) row with
 * `ON CONFLICT DO NOTHING` before the handler runs: a row committed before means a duplicate; a row another
 * transaction inserted and has not committed yet makes this insert wait for it (PostgreSQL's unique index), then
 * skip if it committed or go on if it rolled back. The handler's work, its follow-ups and the row commit together.
 */
export class PostgresInbox implements Inbox {
  readonly table: string;
  private readonly pool: InboxPool;
  private readonly outbox: InboxOutboxWriter | undefined;

  constructor(options: PostgresInboxOptions) {
    if (typeof options?.pool?.connect !== 'function') throw new TypeError('PostgresInbox needs { pool } (a pg Pool)');
    this.pool = options.pool;
    this.table = checkTableName(options.table, DEFAULT_INBOX_TABLE, 'PostgresInbox table');
    if (options.outbox !== undefined && typeof options.outbox?.write !== 'function')
      throw new TypeError('PostgresInbox outbox must be a BabelOutbox (anything with write(transaction, urn, data))');
    this.outbox = options.outbox;
  }

  async run(
    subscription: string,
    id: string | undefined,
    work: (transaction: InboxTransaction) => Promise<void>,
  ): Promise<InboxOutcome> {
    const connection = await this.pool.connect();
    // A connection whose ROLLBACK failed is in an unknown state: it is destroyed instead of going back to the pool.
    let broken: Error | undefined;
    try {
      if (id === undefined) await connection.query('BEGIN');
      else if (!(await this.beginAndRecord(connection, subscription, id))) {
        await connection.query('ROLLBACK');
        return 'duplicate';
      }
      await work(this.transactionOf(connection));
      await connection.query('COMMIT');
      return 'ran';
    } catch (error) {
      await connection.query('ROLLBACK').catch((rollbackFailed: unknown) => {
        broken = rollbackFailed instanceof Error ? rollbackFailed : new Error(String(rollbackFailed));
      });
      throw error;
    } finally {
      connection.release(broken);
    }
  }

  /**
   * Deletes up to `batchSize` rows handled more than `olderThanMs` ago and resolves to how many; call it until it
   * returns less than `batchSize`. Keep `olderThanMs` above the longest time a copy can come back (a redrive of
   * old dead letters included): a copy of a pruned id runs again.
   */
  async prune(olderThanMs: number, batchSize = 1000): Promise<number> {
    if (!(Number.isFinite(olderThanMs) && olderThanMs >= 0)) throw new TypeError('olderThanMs must be a number of ms');
    if (!(Number.isInteger(batchSize) && batchSize > 0))
      throw new TypeError('batchSize must be a positive whole number');
    const connection = await this.pool.connect();
    try {
      const deleted = await queryRows(
        connection,
        `DELETE FROM ${this.table} WHERE ctid IN (
           SELECT ctid FROM ${this.table} WHERE handled_at < now() - $1 * interval '1 millisecond' LIMIT $2
         ) RETURNING message_id`,
        [olderThanMs, batchSize],
      );
      return deleted.length;
    } finally {
      connection.release();
    }
  }

  /**
   * BEGIN and the inbox row; true when the row is new. With `pg` both statements go as one simple query (the values
   * quoted by pg's escapeLiteral), one round trip instead of two: a delivery then costs BEGIN+row, the handler's
   * statements and COMMIT.
   */
  private async beginAndRecord(connection: InboxConnection, subscription: string, id: string): Promise<boolean> {
    const insert = `INSERT INTO ${this.table} (subscription, message_id)`;
    const quote = connection.escapeLiteral?.bind(connection);
    if (quote) {
      const results = await connection.query(
        `BEGIN; ${insert} VALUES (${quote(subscription)}, ${quote(id)}) ON CONFLICT DO NOTHING RETURNING message_id`,
      );
      const last = Array.isArray(results) ? (results[results.length - 1] as { rows?: unknown[] } | undefined) : null;
      return (last?.rows?.length ?? 0) > 0;
    }
    await connection.query('BEGIN');
    const recorded = await queryRows(
      connection,
      `${insert} VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING message_id`,
      [subscription, id],
    );
    return recorded.length > 0;
  }

  private transactionOf(connection: InboxConnection): InboxTransaction {
    const outbox = this.outbox;
    return {
      client: connection,
      publish: (urn: string, data: object, options?: InboxPublishOptions) => {
        if (!outbox)
          throw new BabelQueueError(
            'ctx.publish() in an inbox handler needs an outbox: new PostgresInbox({ pool, outbox: new BabelOutbox({ topic }) })',
          );
        return outbox.write(connection, urn, data, options);
      },
    };
  }
}
