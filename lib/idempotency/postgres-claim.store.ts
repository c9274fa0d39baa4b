import { claimTimes, type ClaimState, type ClaimStore, type ClaimTimes } from './claim-store.js';
import { checkTableName, indexNameOf, queryRows, type SqlQueryable } from './sql-table.js';

export const DEFAULT_CLAIM_TABLE = 'babelqueue_claims';

export interface PostgresClaimStoreOptions extends ClaimTimes {
  /** A `pg` Pool: each statement runs and commits on its own (no transaction is held while the handler runs). */
  pool: SqlQueryable;
  /** The claims table (see claimStoreMigrationSql); default `babelqueue_claims`. */
  table?: string;
}

/**
 * The migration that creates the claims table. Idempotent (`IF NOT EXISTS`): it can run at every start or be pasted
 * into a migration tool. A row is a claim (`token` set, `done` false) or a committed id (`done` true) until
 * `expires_at`; the index serves pruning.
 */
export function claimStoreMigrationSql(table: string = DEFAULT_CLAIM_TABLE): string {
  const name = checkTableName(table, DEFAULT_CLAIM_TABLE, 'table');
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    '  id text PRIMARY KEY,',
    '  token text,',
    '  done boolean NOT NULL DEFAULT false,',
    '  expires_at timestamptz NOT NULL',
    ');',
    `CREATE INDEX IF NOT EXISTS ${indexNameOf(name, 'expires')} ON ${name} (expires_at);`,
  ].join('\n');
}

/**
 * Claims in PostgreSQL, shared by every instance, timed by the database's clock (instances' clocks may differ). A
 * claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE expired`: of two concurrent claims, PostgreSQL lets the
 * second see the first's row, so exactly one gets `claimed`.
 */
export class PostgresClaimStore implements ClaimStore {
  readonly leaseMs: number;
  readonly table: string;
  private readonly doneTtlMs: number;
  private readonly pool: SqlQueryable;

  constructor(options: PostgresClaimStoreOptions) {
    if (typeof options?.pool?.query !== 'function')
      throw new TypeError('PostgresClaimStore needs { pool } (a pg Pool)');
    ({ leaseMs: this.leaseMs, doneTtlMs: this.doneTtlMs } = claimTimes(options, 'PostgresClaimStore'));
    this.pool = options.pool;
    this.table = checkTableName(options.table, DEFAULT_CLAIM_TABLE, 'PostgresClaimStore table');
  }

  async claim(id: string, token: string): Promise<ClaimState> {
    // A row that vanished between the two statements (released) is tried again; after that, it counts as held.
    for (let tries = 0; tries < 3; tries++) {
      const taken = await queryRows(
        this.pool,
        `INSERT INTO ${this.table} AS c (id, token, done, expires_at)
         VALUES ($1, $2, false, clock_timestamp() + $3 * interval '1 millisecond')
         ON CONFLICT (id) DO UPDATE SET token = excluded.token, done = false, expires_at = excluded.expires_at
         WHERE c.expires_at <= clock_timestamp()
         RETURNING id`,
        [id, token, this.leaseMs],
      );
      if (taken.length > 0) return 'claimed';
      const [row] = await queryRows<{ done: boolean }>(
        this.pool,
        `SELECT done FROM ${this.table} WHERE id = $1 AND expires_at > clock_timestamp()`,
        [id],
      );
      if (row) return row.done ? 'done' : 'held';
    }
    return 'held';
  }

  async commit(id: string, _token?: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} AS c (id, token, done, expires_at)
       VALUES ($1, NULL, true, clock_timestamp() + $2 * interval '1 millisecond')
       ON CONFLICT (id) DO UPDATE SET token = NULL, done = true, expires_at = excluded.expires_at`,
      [id, this.doneTtlMs],
    );
  }

  async release(id: string, token: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE id = $1 AND token = $2 AND NOT done`, [id, token]);
  }

  /**
   * Deletes up to `batchSize` expired rows (ended leases, ids past their retention) and resolves to how many; call
   * it until it returns less than `batchSize`. Small batches keep each delete's locks short.
   */
  async prune(batchSize = 1000): Promise<number> {
    if (!(Number.isInteger(batchSize) && batchSize > 0))
      throw new TypeError('batchSize must be a positive whole number');
    const deleted = await queryRows(
      this.pool,
      `DELETE FROM ${this.table} WHERE id IN (
         SELECT id FROM ${this.table} WHERE expires_at <= clock_timestamp() LIMIT $1 FOR UPDATE SKIP LOCKED
       ) RETURNING id`,
      [batchSize],
    );
    return deleted.length;
  }
}
