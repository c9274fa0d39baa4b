import { BabelQueueError } from '../envelope/index.js';
import type {
  MissedTickPolicy,
  ScheduledMessage,
  ScheduleHandle,
  ScheduleListQuery,
  ScheduleState,
  ScheduleTiming,
} from '../schedule/index.js';
import { checkInstant, checkScheduleId } from '../schedule/index.js';
import { runSql, type OutboxSqlRunner } from './sql.js';

/** One schedule to store: the message's parts, checked, and its timing. */
export interface NewSchedule {
  id: string;
  urn: string;
  topic: string;
  key: string | null;
  traceId: string | null;
  /** The payload's JSON text. */
  data: string;
  timing: ScheduleTiming;
}

interface RawSchedule {
  id: string;
  urn: string;
  topic: string;
  partition_key: string | null;
  data: string;
  cron: string | null;
  time_zone: string | null;
  missed: string | null;
  next_tick: Date | null;
  fired: number;
  last_tick: Date | null;
  created_at: Date;
  cancelled_at: Date | null;
}

const COLUMNS =
  'id, urn, topic, partition_key, data, cron, time_zone, missed, next_tick, fired, last_tick, created_at, cancelled_at';

function stateOf(row: RawSchedule): ScheduleState {
  if (row.cancelled_at !== null) return 'cancelled';
  if (row.next_tick !== null) return 'pending';
  return row.cron === null ? 'fired' : 'ended';
}

function toScheduledMessage(row: RawSchedule): ScheduledMessage {
  return {
    id: row.id,
    urn: row.urn,
    topic: row.topic,
    key: row.partition_key,
    data: JSON.parse(row.data) as Record<string, unknown>,
    cron: row.cron,
    tz: row.time_zone,
    missed: row.missed as MissedTickPolicy | null,
    state: stateOf(row),
    nextTick: row.next_tick,
    fired: Number(row.fired),
    lastTick: row.last_tick,
    createdAt: row.created_at,
    cancelledAt: row.cancelled_at,
  };
}

/** The values of a new row, in the column order of the INSERTs below ($1 … $10). */
function rowValues(schedule: NewSchedule): unknown[] {
  const { timing } = schedule;
  const cron = timing.kind === 'cron' ? timing : null;
  return [
    schedule.id,
    schedule.urn,
    schedule.topic,
    schedule.key,
    schedule.traceId,
    schedule.data,
    cron?.cron ?? null,
    cron?.tz ?? null,
    cron?.missed ?? null,
    timing.firstTick,
  ];
}

/**
 * Stores a schedule on the caller's runner (inside its transaction when it has one). The same id again is the
 * same schedule: nothing is written and the stored one's handle comes back with `created: false`.
 */
export async function insertSchedule(
  runner: OutboxSqlRunner,
  table: string,
  schedule: NewSchedule,
): Promise<ScheduleHandle> {
  const inserted = (await runSql(
    runner,
    `INSERT INTO ${table} (id, urn, topic, partition_key, trace_id, data, cron, time_zone, missed, next_tick)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (id) DO NOTHING RETURNING next_tick`,
    rowValues(schedule),
  )) as Array<{ next_tick: Date | null }>;
  if (inserted.length > 0) return { id: schedule.id, created: true, nextTick: inserted[0]!.next_tick };
  const existing = (await runSql(runner, `SELECT next_tick FROM ${table} WHERE id = $1`, [schedule.id])) as Array<{
    next_tick: Date | null;
  }>;
  return { id: schedule.id, created: false, nextTick: existing[0]?.next_tick ?? null };
}

/**
 * Cancels a pending schedule: it never fires again (a firing already written to the outbox is not taken back).
 * True when it was pending. A dispatcher holding the row waits this out, or this waits for the dispatcher's commit,
 * so a schedule that cancel() reports cancelled is never delivered afterwards.
 */
export async function cancelSchedule(runner: OutboxSqlRunner, table: string, id: unknown): Promise<boolean> {
  const rows = await runSql(
    runner,
    `UPDATE ${table} SET next_tick = NULL, cancelled_at = now() WHERE id = $1 AND next_tick IS NOT NULL RETURNING id`,
    [checkScheduleId(id, 'id')],
  );
  return rows.length > 0;
}

/** A pending schedule due now: fired on the dispatcher's next pass. True when it was pending. */
export async function runScheduleNow(runner: OutboxSqlRunner, table: string, id: unknown): Promise<boolean> {
  const rows = await runSql(
    runner,
    `UPDATE ${table} SET next_tick = now() WHERE id = $1 AND next_tick IS NOT NULL RETURNING id`,
    [checkScheduleId(id, 'id')],
  );
  return rows.length > 0;
}

/** One schedule, whatever its state; null when there is none with this id. */
export async function getSchedule(
  runner: OutboxSqlRunner,
  table: string,
  id: unknown,
): Promise<ScheduledMessage | null> {
  const rows = (await runSql(runner, `SELECT ${COLUMNS} FROM ${table} WHERE id = $1`, [
    checkScheduleId(id, 'id'),
  ])) as RawSchedule[];
  return rows.length === 0 ? null : toScheduledMessage(rows[0]!);
}

/** Pending schedules, soonest first: of `urn`, due at or before `before`, at most `limit` (default 100). */
export async function listSchedules(
  runner: OutboxSqlRunner,
  table: string,
  query: ScheduleListQuery = {},
): Promise<ScheduledMessage[]> {
  const limit = query.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1) throw new BabelQueueError(`limit must be an integer >= 1, got ${limit}`);
  const conditions = ['next_tick IS NOT NULL'];
  const parameters: unknown[] = [];
  if (query.urn !== undefined) {
    if (typeof query.urn !== 'string' || query.urn.trim() === '')
      throw new BabelQueueError('urn must be a non-blank URN');
    parameters.push(query.urn.trim());
    conditions.push(`urn = $${parameters.length}`);
  }
  if (query.before !== undefined) {
    parameters.push(checkInstant(query.before, 'before'));
    conditions.push(`next_tick <= $${parameters.length}`);
  }
  parameters.push(limit);
  const rows = (await runSql(
    runner,
    `SELECT ${COLUMNS} FROM ${table} WHERE ${conditions.join(' AND ')} ORDER BY next_tick, id LIMIT $${parameters.length}`,
    parameters,
  )) as RawSchedule[];
  return rows.map(toScheduledMessage);
}

/**
 * Stores a recurring schedule declared in code, or brings the stored one up to date: its URN, topic, key, trace
 * and data always; its cron, time zone and next tick only when the cron or time zone changed (so instances
 * starting one after another never move a tick). A cancelled declaration stays cancelled. Concurrent declarations
 * of one id queue on the row: one schedule, whichever instance came first.
 */
export async function declareSchedule(
  runner: OutboxSqlRunner,
  table: string,
  schedule: NewSchedule,
): Promise<ScheduleHandle> {
  const { timing } = schedule;
  if (timing.kind !== 'cron') throw new BabelQueueError('a declared schedule is a recurring one: give it a cron');
  const rows = (await runSql(
    runner,
    `INSERT INTO ${table} AS s (id, urn, topic, partition_key, trace_id, data, cron, time_zone, missed, next_tick)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (id) DO UPDATE SET urn = EXCLUDED.urn, topic = EXCLUDED.topic, partition_key = EXCLUDED.partition_key,
       trace_id = EXCLUDED.trace_id, data = EXCLUDED.data, missed = EXCLUDED.missed,
       cron = EXCLUDED.cron, time_zone = EXCLUDED.time_zone,
       next_tick = CASE WHEN s.cancelled_at IS NULL
                         AND (s.cron IS DISTINCT FROM EXCLUDED.cron OR s.time_zone IS DISTINCT FROM EXCLUDED.time_zone)
                        THEN EXCLUDED.next_tick ELSE s.next_tick END
     RETURNING next_tick, (xmax = 0) AS created`,
    rowValues(schedule),
  )) as Array<{ next_tick: Date | null; created: boolean }>;
  return { id: schedule.id, created: rows[0]?.created === true, nextTick: rows[0]?.next_tick ?? null };
}
