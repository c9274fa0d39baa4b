import { Logger } from '@nestjs/common';
import { BabelQueueError } from '../envelope/index.js';
import { errorText } from '../envelope/error-text.js';
import { raiseLibraryError, resolveOptions } from '../options/option-table.js';
import { ScheduleMetrics } from '../otel/schedule-metrics.js';
import { loadOpenTelemetry } from '../otel/tracing.js';
import { fireDueSchedules, type ScheduleFiring } from './schedule-claim.js';
import { scheduleDispatcherOptionTable, type ScheduleDispatcherOptions } from './schedule-dispatcher-options.js';
import { DEFAULT_SCHEDULE_TABLE } from './schedule-table.js';
import type { OutboxRelayLogger } from './relay-options.js';
import { checkOutboxTable } from './table.js';
import { PassLoop } from './pass-loop.js';

/** A recurring schedule fires at most this many ticks per pass (policy `all` after a long outage): the rest next pass. */
const MAX_FIRINGS_PER_SCHEDULE = 100;

/** What one pass did. */
export interface ScheduleDispatchResult {
  /** Messages written to the outbox (one per tick fired). */
  fired: number;
  /** Due schedules the pass held. */
  claimed: number;
}

/** What describe() reports (and the module's health check shows under `schedules`). */
export interface ScheduleDispatcherState {
  running: boolean;
  /** Since when passes fail (epoch ms); null while they do not. */
  failingSince: number | null;
  lastError: string | null;
  /** Messages fired since this dispatcher was created. */
  fired: number;
  /** The latest lateness seen (ms after the tick), null before the first firing. */
  lastLatenessMs: number | null;
}

/**
 * Moves due schedules into the outbox (docs/scheduling.md): every `pollIntervalMs` a pass claims due schedules
 * with `FOR UPDATE SKIP LOCKED` and, in the same transaction, writes one outbox row per tick and moves the
 * schedule on, so every instance can run one and each tick is written once. The outbox relay publishes the rows.
 */
export class ScheduleDispatcher {
  readonly table: string;
  readonly outboxTable: string;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly missedAfterMs: number;
  private readonly metricsEnabled: boolean;
  private readonly logger: OutboxRelayLogger;
  private readonly passes: PassLoop<ScheduleDispatchResult>;
  private failingSince: number | null = null;
  private lastError: string | null = null;
  private fired = 0;
  private lastLatenessMs: number | null = null;
  private metricsReady: Promise<void> | null = null;
  private metrics: ScheduleMetrics | undefined;

  constructor(private readonly options: ScheduleDispatcherOptions) {
    if (!options || typeof options.pool?.connect !== 'function') {
      throw new BabelQueueError(
        'ScheduleDispatcher needs options.pool: a pg Pool on the database of the schedule table',
      );
    }
    this.table = checkOutboxTable(options.table ?? DEFAULT_SCHEDULE_TABLE, 'options.table');
    this.outboxTable = checkOutboxTable(options.outboxTable, 'options.outboxTable');
    const tuning = resolveOptions(
      scheduleDispatcherOptionTable,
      options as unknown as Record<string, unknown>,
      'options',
      raiseLibraryError,
    );
    this.batchSize = tuning.batchSize;
    this.pollIntervalMs = tuning.pollIntervalMs;
    this.missedAfterMs = tuning.missedAfterMs;
    this.metricsEnabled = tuning.metrics;
    this.logger = options.logger ?? new Logger('ScheduleDispatcher');
    this.passes = new PassLoop(
      () => this.trackedPass(),
      (result) => result.claimed >= this.batchSize,
      this.pollIntervalMs,
    );
  }

  /** One pass: fires what is due, up to `batchSize` schedules. Passes of one dispatcher never overlap. */
  flush(): Promise<ScheduleDispatchResult> {
    return this.passes.next();
  }

  /** Passes until one claims less than a full batch. */
  async drain(): Promise<ScheduleDispatchResult> {
    const total = { fired: 0, claimed: 0 };
    for (;;) {
      const result = await this.flush();
      total.fired += result.fired;
      total.claimed += result.claimed;
      if (result.claimed < this.batchSize) return total;
    }
  }

  /** Runs passes in the background until stop(). */
  start(): void {
    this.passes.start();
  }

  /** Stops after the pass under way (its firings committed or rolled back before this resolves). */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  describe(): ScheduleDispatcherState {
    return {
      running: this.passes.started,
      failingSince: this.failingSince,
      lastError: this.lastError,
      fired: this.fired,
      lastLatenessMs: this.lastLatenessMs,
    };
  }

  private async trackedPass(): Promise<ScheduleDispatchResult> {
    if (this.metricsEnabled) {
      this.metricsReady ??= loadOpenTelemetry().then(
        () => {
          this.metrics = ScheduleMetrics.create();
        },
        () => undefined,
      );
      await this.metricsReady;
    }
    let outcome;
    try {
      outcome = await fireDueSchedules(this.options.pool, {
        schedules: this.table,
        outbox: this.outboxTable,
        limit: this.batchSize,
        missedAfterMs: this.missedAfterMs,
        maxFiringsPerSchedule: MAX_FIRINGS_PER_SCHEDULE,
      });
    } catch (error) {
      const text = errorText(error);
      if (this.failingSince === null) {
        this.failingSince = Date.now();
        this.lastError = text;
        this.logger.warn(
          `schedule dispatcher pass failed, nothing fired: ${text}. Due schedules stay due and fire once passes ` +
            'succeed again (one line then)',
        );
      } else this.logger.debug?.(`schedule dispatcher pass failed again: ${text}`);
      throw error;
    }
    if (this.failingSince !== null) {
      this.logger.warn(
        `schedule dispatcher passes succeed again after ${((Date.now() - this.failingSince) / 1000).toFixed(1)} s`,
      );
      this.failingSince = null;
      this.lastError = null;
    }
    for (const broken of outcome.broken) {
      this.logger.warn(`schedule ${broken.id} cannot be fired, tried again in a minute: ${broken.error}`);
    }
    this.record(outcome.firings);
    if (outcome.firings.length > 0) this.options.onFired?.();
    return { fired: outcome.firings.length, claimed: outcome.claimed };
  }

  private record(firings: ScheduleFiring[]): void {
    this.fired += firings.length;
    for (const firing of firings) {
      this.lastLatenessMs = firing.lateMs;
      this.metrics?.fired(firing.topic, firing.lateMs);
    }
  }
}
