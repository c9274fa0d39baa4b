import { raiseLibraryError } from '../options/option-table.js';

/** The table name when none is given. */
export const DEFAULT_OUTBOX_TABLE = 'babelqueue_outbox';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/**
 * The table name, checked: it is written into SQL text (a table cannot be a bind parameter), so only a plain
 * identifier or schema.identifier is accepted.
 */
export function checkOutboxTable(
  table: unknown,
  name = 'table',
  raise: (message: string) => never = raiseLibraryError,
): string {
  if (table === undefined) return DEFAULT_OUTBOX_TABLE;
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    return raise(
      `${name} must be a plain SQL identifier such as "babelqueue_outbox" or "app.outbox" (letters, digits, _), got ${JSON.stringify(table)}`,
    );
  }
  return table;
}

/**
 * The migration that creates the outbox table (PostgreSQL). Idempotent (`IF NOT EXISTS`), so it can run at every
 * start or be pasted into a migration tool. `seq` orders rows oldest first; `body` is the encoded envelope,
 * byte for byte as the relay publishes it; the partial index keeps the relay's pending scan cheap once most rows
 * are published. See docs/outbox.md.
 */
export function outboxMigrationSql(table: string = DEFAULT_OUTBOX_TABLE): string {
  const name = checkOutboxTable(table);
  const index = `${name.replace('.', '_')}_pending`.slice(0, 63);
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    '  seq bigserial PRIMARY KEY,',
    '  message_id text NOT NULL,',
    '  topic text NOT NULL,',
    '  partition_key text,',
    '  body bytea NOT NULL,',
    '  attempts integer NOT NULL DEFAULT 0,',
    '  next_attempt_at timestamptz NOT NULL DEFAULT now(),',
    '  last_error text,',
    '  created_at timestamptz NOT NULL DEFAULT now(),',
    '  published_at timestamptz',
    ');',
    `CREATE INDEX IF NOT EXISTS ${index} ON ${name} (next_attempt_at, seq) WHERE published_at IS NULL;`,
  ].join('\n');
}
