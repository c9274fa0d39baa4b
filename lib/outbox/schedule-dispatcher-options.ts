import type { OptionsInput } from '../options/option-table.js';
import { flag, integer } from '../options/validators.js';
import type { OutboxRelayLogger } from './relay-options.js';
import type { OutboxPool } from './relay-store.js';

/**
 * The schedule dispatcher's tuning (`new ScheduleDispatcher({ pool, ...tuning })`, or the module's
 * `outbox: { schedules: { … } }`). docs/scheduling.md renders this table (`npm run readme`).
 */
export const scheduleDispatcherOptionTable = {
  /**
   * Due schedules claimed per pass (each becomes one outbox row per tick it fires, in the pass's transaction).
   * @defaultValue `200`
   */
  batchSize: integer({ min: 1, fallback: 200 }),
  /**
   * Pause between passes when the last one did not claim a full batch. Each pass is one indexed query while
   * nothing is due, whatever the number of pending schedules.
   * @defaultValue `200`
   */
  pollIntervalMs: integer({ min: 1, fallback: 200 }),
  /**
   * A tick of a recurring schedule older than this when a pass finds it was missed (no instance ran), not merely
   * late: it follows the schedule's `missed` policy. A tick younger than this always fires.
   * @defaultValue `10000`
   */
  missedAfterMs: integer({ min: 0, fallback: 10_000 }),
  /**
   * The dispatcher's OpenTelemetry counters (`babelqueue.schedule.fired`, and the histogram `babelqueue.schedule.lateness` in ms), when
   * `@opentelemetry/api` is installed and a MeterProvider registered. The module passes its `telemetry.metrics`.
   * @defaultValue `true`
   */
  metrics: flag(true),
};

/** The keys of the tuning table: what the module's `outbox.schedules` accepts. */
export const SCHEDULE_DISPATCHER_TUNING_KEYS = Object.keys(scheduleDispatcherOptionTable);

/** The dispatcher's tuning, as given. */
export type ScheduleDispatcherTuning = OptionsInput<typeof scheduleDispatcherOptionTable>;

export interface ScheduleDispatcherOptions extends ScheduleDispatcherTuning {
  /** A `pg` Pool on the database of the schedule and outbox tables. */
  pool: OutboxPool;
  /** The schedule table; default `babelqueue_schedules`. */
  table?: string;
  /** The outbox table the firings are written to; default `babelqueue_outbox`. */
  outboxTable?: string;
  /** Called after a pass wrote firings to the outbox: the module wakes its relay, so they go out at once. */
  onFired?: () => void;
  /** Failing passes and broken schedules go to `warn`, once per outage. */
  logger?: OutboxRelayLogger;
}
