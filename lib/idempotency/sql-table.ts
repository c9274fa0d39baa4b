const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/**
 * A table name, checked: it is written into SQL text (a table cannot be a bind parameter), so only a plain
 * identifier or schema.identifier is accepted.
 */
export function checkTableName(table: unknown, fallback: string, name: string): string {
  if (table === undefined) return fallback;
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw new TypeError(
      `${name} must be a plain SQL identifier such as "${fallback}" or "app.${fallback}" (letters, digits, _), got ${JSON.stringify(table)}`,
    );
  }
  return table;
}

/** An index name derived from a table name, within PostgreSQL's 63 characters. */
export const indexNameOf = (table: string, suffix: string): string =>
  `${table.replace('.', '_')}_${suffix}`.slice(0, 63);

/** Anything that runs one SQL statement: a `pg` Pool (each statement commits on its own), Client or PoolClient. */
export interface SqlQueryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** The rows of a query, from a `pg` result (`{ rows }`) or a runner that answers with the rows (TypeORM). */
export async function queryRows<Row>(runner: SqlQueryable, sql: string, parameters: unknown[]): Promise<Row[]> {
  const result = await runner.query(sql, parameters);
  if (Array.isArray(result)) return result as Row[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as Row[]) : [];
}
