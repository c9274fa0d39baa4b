import { BabelQueueError } from '../envelope/index.js';
import type { PayloadSchema } from '../schema/payload-schema.js';
import { checkCron, nextTickAfter } from './cron-ticks.js';
import { MISSED_TICK_POLICIES, type MissedTickPolicy } from './missed-ticks.js';

/** The longest schedule id: it is a primary key and a Pulsar property value. */
const MAX_ID_LENGTH = 200;

/**
 * When and how a scheduled message is published (docs/scheduling.md). Exactly one of `at`, `delay` (a one-off
 * schedule) or `cron` (a recurring one).
 */
export interface ScheduleOptions {
  /** Publish at this time: a Date, epoch milliseconds, or an ISO 8601 text with its offset. */
  at?: Date | number | string;
  /** Publish this many milliseconds from now. */
  delay?: number;
  /** A recurring schedule: a cron expression of 5 fields (minutes) or 6 (seconds first), read by croner. */
  cron?: string;
  /** The IANA time zone the cron expression is read in (e.g. `Europe/Paris`); default `UTC`. */
  tz?: string;
  /** Ticks missed while no instance ran (older than the dispatcher's `missedAfterMs`): `skip`, `once` or `all`; default `once`. */
  missed?: MissedTickPolicy;
  /** The schedule's id: scheduling the same id again is the same schedule (nothing new is written). A new UUID when absent. */
  id?: string;
  /** Topic to publish to; default the outbox's (the module's) topic. */
  topic?: string;
  /** Partition key of each message fired. */
  key?: string;
  /** The trace every firing continues (`trace_id`); a new one per firing when absent. */
  traceId?: string;
  /** Validate `data` now (nothing stored when invalid) and encrypt its marked fields; default: the contract's. */
  schema?: PayloadSchema;
}

/** What schedule() resolves to. */
export interface ScheduleHandle {
  /** The schedule's id (the one given, or a new UUID). */
  id: string;
  /** False when a schedule with this id existed already: nothing was written, this is that schedule. */
  created: boolean;
  /** When it fires next; null when it will not fire again (fired, cancelled). */
  nextTick: Date | null;
}

/** Where a schedule stands. */
export type ScheduleState = 'pending' | 'fired' | 'cancelled' | 'ended';

/** One stored schedule, as get() and list() read it. */
export interface ScheduledMessage {
  id: string;
  urn: string;
  topic: string;
  key: string | null;
  /** The data each firing carries (as stored: fields a schema marks are encrypted). */
  data: Record<string, unknown>;
  /** Null for a one-off schedule. */
  cron: string | null;
  tz: string | null;
  missed: MissedTickPolicy | null;
  state: ScheduleState;
  /** When it fires next; null once it will not fire again. */
  nextTick: Date | null;
  /** How many messages it fired. */
  fired: number;
  /** The tick of its last firing. */
  lastTick: Date | null;
  createdAt: Date;
  cancelledAt: Date | null;
}

/** Which pending schedules list() returns: of this URN, due at or before this time; at most `limit` (default 100). */
export interface ScheduleListQuery {
  urn?: string;
  before?: Date | number | string;
  limit?: number;
}

/** A schedule's timing, checked: one first tick, and for a recurring schedule what computes the next ones. */
export type ScheduleTiming =
  | { kind: 'once'; firstTick: Date }
  | { kind: 'cron'; firstTick: Date; cron: string; tz: string; missed: MissedTickPolicy };

const describe = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/** A point in time given as a Date, epoch ms or ISO text; throws on anything else. */
export function checkInstant(value: unknown, name: string): Date {
  const date =
    value instanceof Date
      ? new Date(value.getTime())
      : typeof value === 'number' || typeof value === 'string'
        ? new Date(value)
        : undefined;
  // A bare number in text ("1700000000000") would be read as a year: only ISO-like text is accepted.
  const textOk = typeof value !== 'string' || /^\d{4}-\d{2}-\d{2}/.test(value.trim());
  if (date === undefined || Number.isNaN(date.getTime()) || !textOk) {
    throw new BabelQueueError(`${name} must be a Date, epoch milliseconds or an ISO 8601 time, got ${describe(value)}`);
  }
  return date;
}

/** The schedule's id, checked (or a new UUID when none was given). */
export function checkScheduleId(id: unknown, name = 'options.id'): string {
  if (typeof id !== 'string' || id.trim() === '' || id.length > MAX_ID_LENGTH) {
    throw new BabelQueueError(
      `${name} must be a non-blank string of at most ${MAX_ID_LENGTH} characters, got ${describe(id)}`,
    );
  }
  return id.trim();
}

/**
 * The timing of a schedule: exactly one of `at`, `delay` or `cron`. `now` is the caller's clock; a one-off time
 * in the past is due at once (never refused: a schedule written late still fires).
 */
export function checkScheduleTiming(options: ScheduleOptions, now: Date = new Date()): ScheduleTiming {
  if (options === null || typeof options !== 'object') {
    throw new BabelQueueError('schedule options must be an object with one of { at }, { delay } or { cron }');
  }
  const given = (['at', 'delay', 'cron'] as const).filter((key) => options[key] !== undefined);
  if (given.length !== 1) {
    throw new BabelQueueError(
      `schedule needs exactly one of options.at, options.delay or options.cron, got ${given.length === 0 ? 'none' : given.join(' and ')}`,
    );
  }
  if (options.cron === undefined) {
    for (const key of ['tz', 'missed'] as const) {
      if (options[key] !== undefined) throw new BabelQueueError(`options.${key} applies to a cron schedule only`);
    }
  }
  if (options.at !== undefined) return { kind: 'once', firstTick: checkInstant(options.at, 'options.at') };
  if (options.delay !== undefined) {
    const delay = options.delay;
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
      throw new BabelQueueError(`options.delay must be a finite number of milliseconds >= 0, got ${describe(delay)}`);
    }
    return { kind: 'once', firstTick: new Date(now.getTime() + Math.ceil(delay)) };
  }
  const tz = options.tz ?? 'UTC';
  const cron = checkCron(options.cron, tz);
  const missed = options.missed ?? 'once';
  if (!MISSED_TICK_POLICIES.includes(missed)) {
    throw new BabelQueueError(
      `options.missed must be one of ${MISSED_TICK_POLICIES.join(', ')}, got ${describe(missed)}`,
    );
  }
  const firstTick = nextTickAfter(cron, tz, now);
  if (firstTick === null)
    throw new BabelQueueError(`options.cron ${JSON.stringify(cron)} never fires after ${now.toISOString()}`);
  return { kind: 'cron', firstTick, cron, tz, missed };
}
