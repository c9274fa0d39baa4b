import { checkOutboxTable, DEFAULT_OUTBOX_TABLE, outboxHeadersMigrationSql } from './table.js';

/** The schedule table's name when none is given. */
export const DEFAULT_SCHEDULE_TABLE = 'babelqueue_schedules';

/**
 * The migration of stored schedules (PostgreSQL), beside the outbox: the schedule table and the outbox's
 * `headers` column that carries each firing's `bq-schedule-*` properties. Idempotent (`IF NOT EXISTS`), so it can
 * run at every start or be pasted into a migration tool. `next_tick` is when the schedule fires next (NULL once it
 * never will: fired, cancelled or ended); the partial index on it keeps the dispatcher's due scan as cheap with
 * 100,000 pending schedules as with ten. `data` is the JSON text of the payload, kept as text so its key order
 * and numbers reach the envelope unchanged.
 */
export function scheduleMigrationSql(
  table: string = DEFAULT_SCHEDULE_TABLE,
  outboxTable: string = DEFAULT_OUTBOX_TABLE,
): string {
  const name = checkOutboxTable(table, 'table');
  const outbox = checkOutboxTable(outboxTable, 'outboxTable');
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    '  id text PRIMARY KEY,',
    '  urn text NOT NULL,',
    '  topic text NOT NULL,',
    '  partition_key text,',
    '  trace_id text,',
    '  data text NOT NULL,',
    '  cron text,',
    '  time_zone text,',
    '  missed text,',
    '  next_tick timestamptz,',
    '  fired integer NOT NULL DEFAULT 0,',
    '  last_tick timestamptz,',
    '  last_fired_at timestamptz,',
    '  created_at timestamptz NOT NULL DEFAULT now(),',
    '  cancelled_at timestamptz',
    ');',
    `CREATE INDEX IF NOT EXISTS ${`${name.replace('.', '_')}_due`.slice(0, 63)} ON ${name} (next_tick) WHERE next_tick IS NOT NULL;`,
    outboxHeadersMigrationSql(outbox),
  ].join('\n');
}
