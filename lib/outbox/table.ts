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
 * are published. `parked_at` marks a row the relay gave up on (docs/outbox.md#parked-rows); the `ALTER TABLE`
 * adds it to a table created before it existed, so running this again is the upgrade. `headers` holds extra Pulsar
 * properties of a row (a scheduled message's `bq-schedule-*`), added the same way, and so are the columns of a
 * relay the broker deduplicates (outboxDeduplicationMigrationSql).
 */
export function outboxMigrationSql(table: string = DEFAULT_OUTBOX_TABLE): string {
  const name = checkOutboxTable(table);
  const indexName = (suffix: string) => `${name.replace('.', '_')}_${suffix}`.slice(0, 63);
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
    '  published_at timestamptz,',
    '  parked_at timestamptz',
    ');',
    outboxParkingMigrationSql(name),
    outboxHeadersMigrationSql(name),
    outboxDeduplicationMigrationSql(name),
    `CREATE INDEX IF NOT EXISTS ${indexName('pending')} ON ${name} (next_attempt_at, seq) WHERE published_at IS NULL;`,
    `CREATE INDEX IF NOT EXISTS ${indexName('parked')} ON ${name} (seq) WHERE parked_at IS NOT NULL;`,
  ].join('\n');
}

/** The one statement that upgrades a table created before parking existed (part of outboxMigrationSql). */
export function outboxParkingMigrationSql(table: string = DEFAULT_OUTBOX_TABLE): string {
  return `ALTER TABLE ${checkOutboxTable(table)} ADD COLUMN IF NOT EXISTS parked_at timestamptz;`;
}

/**
 * The statement that adds the `headers` column (extra Pulsar properties of a row, e.g. a fired schedule's
 * `bq-schedule-id`): part of outboxMigrationSql and scheduleMigrationSql. Instant (nullable, no default).
 */
export function outboxHeadersMigrationSql(table: string = DEFAULT_OUTBOX_TABLE): string {
  return `ALTER TABLE ${checkOutboxTable(table)} ADD COLUMN IF NOT EXISTS headers jsonb;`;
}

/** The sequence that numbers the rows a deduplicating relay is about to send (one per outbox table). */
export function outboxDedupSequenceName(table: string = DEFAULT_OUTBOX_TABLE): string {
  return `${checkOutboxTable(table)}_dedup_seq`;
}

/**
 * The statements that let a relay with `deduplication` stamp a row before sending it: which relay (its producer
 * name) will send it, with which sequence id, since when; and the sequence the ids come from. Part of
 * outboxMigrationSql; instant (nullable columns, no default). See docs/exactly-once.md#a-relay-the-broker-deduplicates.
 */
export function outboxDeduplicationMigrationSql(table: string = DEFAULT_OUTBOX_TABLE): string {
  const name = checkOutboxTable(table);
  return [
    `ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS dedup_producer text;`,
    `ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS dedup_sequence bigint;`,
    `ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS dedup_stamped_at timestamptz;`,
    `CREATE SEQUENCE IF NOT EXISTS ${outboxDedupSequenceName(name)};`,
  ].join('\n');
}
