import { EnvelopeCodec, bareTopicName } from '../envelope/index.js';
import { errorText } from '../envelope/error-text.js';
import { decideDueTicks, nextTickAfter, scheduleProperties, type MissedTickPolicy } from '../schedule/index.js';
import type { OutboxPool } from './relay-store.js';
import { runSql } from './sql.js';

/** One message a pass wrote to the outbox for a schedule's tick. */
export interface ScheduleFiring {
  scheduleId: string;
  topic: string;
  tick: Date;
  /** How long after its tick it was written (the database's clock). */
  lateMs: number;
}

export interface ScheduleClaimResult {
  /** Due schedules this pass held. */
  claimed: number;
  firings: ScheduleFiring[];
  /** Schedules whose stored row could not be turned into a message (their id and why); moved a minute on. */
  broken: Array<{ id: string; error: string }>;
}

export interface ScheduleClaimSettings {
  schedules: string;
  outbox: string;
  limit: number;
  missedAfterMs: number;
  maxFiringsPerSchedule: number;
}

interface RawDue {
  id: string;
  urn: string;
  topic: string;
  partition_key: string | null;
  trace_id: string | null;
  data: string;
  cron: string | null;
  time_zone: string | null;
  missed: string | null;
  next_tick: Date;
  db_now: Date;
}

/** How long a schedule whose row cannot become a message waits before it is tried again. */
const BROKEN_RETRY_MS = 60_000;

/**
 * One pass over due schedules, in one transaction: claims up to `limit` due rows with `FOR UPDATE SKIP LOCKED`
 * (a row another instance holds is skipped; once it commits, the row's `next_tick` has moved past the tick, so it
 * is not due any more), writes one outbox row per tick to fire, and moves each schedule on (a one-off to no next
 * tick, a recurring one to its next tick). The outbox rows and the schedule's move commit together, so each tick
 * is written exactly once; a crash before the commit writes nothing and the next pass (here or elsewhere) fires it.
 */
export async function fireDueSchedules(
  pool: OutboxPool,
  settings: ScheduleClaimSettings,
): Promise<ScheduleClaimResult> {
  const connection = await pool.connect();
  const dropped = () => undefined; // a dropped connection surfaces as the next query's rejection
  connection.on?.('error', dropped);
  let failure: unknown;
  try {
    await connection.query('BEGIN');
    const due = (await runSql(
      connection,
      `SELECT id, urn, topic, partition_key, trace_id, data, cron, time_zone, missed, next_tick, now() AS db_now
         FROM ${settings.schedules} WHERE next_tick <= now()
        ORDER BY next_tick LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [settings.limit],
    )) as RawDue[];
    const result: ScheduleClaimResult = { claimed: due.length, firings: [], broken: [] };
    const outbox = {
      ids: [] as string[],
      topics: [] as string[],
      keys: [] as Array<string | null>,
      bodies: [] as Buffer[],
      headers: [] as string[],
    };
    const moves = {
      ids: [] as string[],
      next: [] as Array<Date | null>,
      fired: [] as number[],
      last: [] as Array<Date | null>,
    };
    for (const row of due) {
      const now = new Date(row.db_now);
      try {
        const decision =
          row.cron === null
            ? { fire: [new Date(row.next_tick)], next: null }
            : decideDueTicks({
                due: new Date(row.next_tick),
                now,
                policy: (row.missed ?? 'once') as MissedTickPolicy,
                missedAfterMs: settings.missedAfterMs,
                maxFirings: settings.maxFiringsPerSchedule,
                nextAfter: (tick) => nextTickAfter(row.cron!, row.time_zone ?? 'UTC', tick),
              });
        const data = JSON.parse(row.data) as Record<string, unknown>;
        for (const tick of decision.fire) {
          const envelope = EnvelopeCodec.make(row.urn, data, {
            queue: bareTopicName(row.topic),
            ...(row.trace_id !== null && { traceId: row.trace_id }),
          });
          outbox.ids.push(envelope.meta.id);
          outbox.topics.push(row.topic);
          outbox.keys.push(row.partition_key);
          outbox.bodies.push(EnvelopeCodec.encodeToBuffer(envelope));
          outbox.headers.push(JSON.stringify(scheduleProperties(row.id, tick)));
          result.firings.push({ scheduleId: row.id, topic: row.topic, tick, lateMs: now.getTime() - tick.getTime() });
        }
        moves.ids.push(row.id);
        moves.next.push(decision.next);
        moves.fired.push(decision.fire.length);
        moves.last.push(decision.fire.at(-1) ?? null);
      } catch (error) {
        result.broken.push({ id: row.id, error: errorText(error) });
        moves.ids.push(row.id);
        moves.next.push(new Date(now.getTime() + BROKEN_RETRY_MS));
        moves.fired.push(0);
        moves.last.push(null);
      }
    }
    if (outbox.ids.length > 0) {
      await connection.query(
        `INSERT INTO ${settings.outbox} (message_id, topic, partition_key, body, headers)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::jsonb[])`,
        [outbox.ids, outbox.topics, outbox.keys, outbox.bodies, outbox.headers],
      );
    }
    if (moves.ids.length > 0) {
      await connection.query(
        `UPDATE ${settings.schedules} AS s SET next_tick = m.next_tick, fired = s.fired + m.fired,
            last_tick = COALESCE(m.last_tick, s.last_tick),
            last_fired_at = CASE WHEN m.fired > 0 THEN now() ELSE s.last_fired_at END
           FROM unnest($1::text[], $2::timestamptz[], $3::integer[], $4::timestamptz[]) AS m(id, next_tick, fired, last_tick)
          WHERE s.id = m.id`,
        [moves.ids, moves.next, moves.fired, moves.last],
      );
    }
    await connection.query('COMMIT');
    return result;
  } catch (error) {
    failure = error;
    try {
      await connection.query('ROLLBACK');
    } catch {
      // the connection is gone; it is destroyed below
    }
    throw error;
  } finally {
    connection.off?.('error', dropped);
    connection.release(failure === undefined ? undefined : failure instanceof Error ? failure : true);
  }
}
