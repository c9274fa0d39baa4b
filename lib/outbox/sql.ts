import { BabelQueueError } from '../envelope/index.js';

/**
 * Anything that runs a parameterised SQL statement on the caller's open transaction: a `pg` PoolClient or Client
 * (`query(text, values)` resolves to `{ rows }`) or a TypeORM EntityManager / QueryRunner of a PostgreSQL
 * DataSource (`query(sql, parameters)` resolves to the rows). Both use `$1, $2, …` placeholders.
 */
export interface OutboxSqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** The rows of a query, whichever kind of runner answered. */
export async function runSql(runner: OutboxSqlRunner, sql: string, parameters: unknown[]): Promise<unknown[]> {
  const result = await runner.query(sql, parameters);
  if (Array.isArray(result)) return result;
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? rows : [];
}

export function checkSqlRunner(runner: unknown, name: string): OutboxSqlRunner {
  if (typeof runner !== 'object' || runner === null || typeof (runner as OutboxSqlRunner).query !== 'function') {
    throw new BabelQueueError(
      `${name} must be the open transaction to write in: a pg PoolClient (after BEGIN) or a TypeORM EntityManager ` +
        '(inside dataSource.transaction(...)), anything with query(sql, parameters)',
    );
  }
  return runner as OutboxSqlRunner;
}
