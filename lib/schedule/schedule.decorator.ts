import { BabelQueueError } from '../envelope/index.js';
import { checkCron } from './cron-ticks.js';
import { MISSED_TICK_POLICIES, type MissedTickPolicy } from './missed-ticks.js';
import { checkScheduleId } from './schedule-options.js';

/** A recurring schedule declared in code, on the @BabelHandler method that handles what it fires. */
export interface DeclaredScheduleOptions {
  /** The schedule's id: one schedule per id across every instance (each one declares it at start, idempotently). */
  id: string;
  /** A cron expression of 5 fields (minutes) or 6 (seconds first), read by croner. */
  cron: string;
  /** The IANA time zone the expression is read in; default `UTC`. */
  tz?: string;
  /** Ticks missed while no instance ran: `skip`, `once` (the default) or `all`. */
  missed?: MissedTickPolicy;
  /** The data of each message fired; default `{}`. */
  data?: Record<string, unknown>;
  /** Partition key of each message fired. */
  key?: string;
  /** Topic to publish to; default the module's topic. */
  topic?: string;
}

/** Where the declarations sit: on the method, as a list (a method may carry several). */
export const BABEL_SCHEDULE_METADATA = 'babelqueue:schedules';

type MetadataReflect = {
  getMetadata(key: string, target: object): unknown;
  defineMetadata(key: string, value: unknown, target: object): void;
};
const reflect = Reflect as unknown as MetadataReflect;

/**
 * Declares a recurring schedule that fires the URN of the @BabelHandler method it decorates, e.g.
 * `@BabelSchedule({ id: 'nightly-report', cron: '0 2 * * *', tz: 'Europe/Paris' })`. At start-up the module stores it
 * (or updates its cron, time zone and data when they changed); one message per tick across every instance, so the
 * method runs once per tick on one of them (docs/scheduling.md). Needs `outbox: { pool, schedules: true }`.
 */
export function BabelSchedule(options: DeclaredScheduleOptions): MethodDecorator {
  if (options === null || typeof options !== 'object') {
    throw new BabelQueueError('@BabelSchedule needs { id, cron, tz?, missed?, data? }');
  }
  checkScheduleId(options.id, '@BabelSchedule id');
  checkCron(options.cron, options.tz ?? 'UTC');
  if (options.missed !== undefined && !MISSED_TICK_POLICIES.includes(options.missed)) {
    throw new BabelQueueError(`@BabelSchedule missed must be one of ${MISSED_TICK_POLICIES.join(', ')}`);
  }
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    const declared =
      (reflect.getMetadata(BABEL_SCHEDULE_METADATA, method) as DeclaredScheduleOptions[] | undefined) ?? [];
    reflect.defineMetadata(BABEL_SCHEDULE_METADATA, [...declared, { ...options }], method);
    return descriptor;
  };
}
