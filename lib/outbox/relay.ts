import { Logger } from '@nestjs/common';
import { BabelQueueError } from '../envelope/index.js';
import { errorText } from '../envelope/error-text.js';
import { raiseLibraryError, resolveOptions } from '../options/option-table.js';
import { loadOpenTelemetry } from '../otel/tracing.js';
import { OutboxMetrics } from '../otel/outbox-metrics.js';
import { OUTBOX_BACKOFF_CAP_MS } from './backoff.js';
import { decideFailedRow, outboxFailureCause } from './failure.js';
import { OutageWatch, type OutageReport } from './outage-watch.js';
import {
  listParkedOutboxRows,
  requeueParkedOutboxRows,
  type OutboxRequeueSelection,
  type ParkedOutboxListing,
} from './parked.js';
import { claimOutboxRows, outboxHasHeaders, type OutboxClaim, type OutboxRow } from './relay-store.js';
import { outboxRelayOptionTable, type OutboxRelayLogger, type OutboxRelayOptions } from './relay-options.js';
import { checkDeduplication, stampOutboxRows, type OutboxRelayDeduplication } from './relay-dedup.js';
import { BabelProducerPool } from '../nest/client/producer-pool.js';
import { clientNameOf } from '../nest/client/producer-settings.js';
import type { ProducerSource } from '../nest/client/producer-settings.js';
import { checkOutboxTable, outboxParkingMigrationSql } from './table.js';
import { PassLoop } from './pass-loop.js';
import type { OutboxRelayResult, OutboxRelayState } from './relay-state.js';
import { mayBeStored, sendRow } from './relay-send.js';

export type { OutboxRelayOptions } from './relay-options.js';
export type { OutboxRelayResult, OutboxRelayState } from './relay-state.js';

/** drain() stops after this many passes even if every pass made progress. */
const DRAIN_CEILING = 10_000;

/** An outage is over this long after its last failure: twice the longest backoff, so every failed row was due again. */
const OUTAGE_QUIET_MS = 2 * OUTBOX_BACKOFF_CAP_MS;

/** A table found without the `headers` column is looked at again this often (it may have been migrated since). */
const HEADERS_RECHECK_MS = 30_000;

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

/** What one pass did, beyond its result: whether the loop may go on at once, and whether to probe next. */
interface PassOutcome {
  result: OutboxRelayResult;
  claimed: number;
  limit: number;
  brokerFailures: number;
}

/**
 * The publishing side of the transactional outbox. Each pass claims up to `batchSize` due rows (oldest first,
 * locked with SKIP LOCKED so several relays share the work without publishing a row twice at once), checks each
 * row's body with the consumer's codec, publishes it byte for byte with the `bq-*` properties read from it, and,
 * in the same transaction, marks the rows the broker stored as published and the others failed (attempts + 1,
 * due again after the backoff) or, when the row itself is at fault and has had its attempts, parked. A crash
 * after a publish and before the commit leaves the row pending: it is published again with the same `meta.id`,
 * which consumer idempotency removes. An outage is logged once when it starts and once when it ends. See
 * docs/outbox.md.
 */
export class OutboxRelay {
  readonly table: string;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly publishTimeoutMs: number;
  private readonly parkAfterAttempts: number;
  private readonly metricsEnabled: boolean;
  private readonly logger: OutboxRelayLogger;
  private readonly broker = new OutageWatch(OUTAGE_QUIET_MS);
  private readonly database = new OutageWatch(0);
  private readonly counts = { published: 0, failed: 0, parked: 0 };
  private readonly passes: PassLoop<PassOutcome>;
  /** The last pass failed every row it tried because of the broker: the next one tries a single row. */
  private probing = false;
  private parkable: boolean | null = null;
  /** Whether the table has the `headers` column, and when that was last looked at. */
  private headersColumn: boolean | null = null;
  private headersCheckedAt = 0;
  private parkingWarned = false;
  private metricsReady: Promise<void> | null = null;
  private metrics: OutboxMetrics | undefined;
  /** With deduplication: the stamps' owner and the relay's own named producers; else the given producers. */
  private readonly dedup: Required<OutboxRelayDeduplication> | null;
  private readonly producers: ProducerSource;
  private readonly ownProducers: BabelProducerPool | null;

  constructor(private readonly options: OutboxRelayOptions) {
    if (!options || typeof options.pool?.connect !== 'function') {
      throw new BabelQueueError('OutboxRelay needs options.pool: a pg Pool on the database of the outbox table');
    }
    if (options.deduplication === undefined && typeof options.producers?.producerFor !== 'function') {
      throw new BabelQueueError('OutboxRelay needs options.producers (e.g. new BabelProducerPool(pulsarClient))');
    }
    this.table = checkOutboxTable(options.table, 'options.table');
    const tuning = resolveOptions(
      outboxRelayOptionTable,
      options as unknown as Record<string, unknown>,
      'options',
      raiseLibraryError,
    );
    this.batchSize = tuning.batchSize;
    this.pollIntervalMs = tuning.pollIntervalMs;
    this.publishTimeoutMs = tuning.publishTimeoutMs;
    this.parkAfterAttempts = tuning.parkAfterAttempts;
    this.metricsEnabled = tuning.metrics;
    this.logger = options.logger ?? new Logger('OutboxRelay');
    this.passes = new PassLoop(
      () => this.trackedPass(),
      (outcome) => outcome.claimed === outcome.limit && outcome.brokerFailures === 0,
      this.pollIntervalMs,
    );
    this.dedup = options.deduplication === undefined ? null : checkDeduplication(options.deduplication);
    if (this.dedup) {
      // Batching off: the broker then checks each row's own sequence id (a batch carries only its highest).
      this.ownProducers = new BabelProducerPool(this.dedup.client, {
        producerOptions: { producerName: this.dedup.producerName, batchingEnabled: false },
      });
      this.producers = this.ownProducers;
      if (clientNameOf(this.dedup.client) === 'websocket') {
        this.logger.warn(
          `outbox relay ${this.dedup.producerName}: the WebSocket API carries no sequence id, so the broker cannot ` +
            'drop a row this relay sends again after a crash; use the native client for that ' +
            '(docs/exactly-once.md#a-relay-the-broker-deduplicates)',
        );
      }
    } else {
      this.ownProducers = null;
      this.producers = options.producers!;
    }
  }

  /** True between start() and stop(). */
  get started(): boolean {
    return this.passes.started;
  }

  /** One pass: claims, publishes and marks at most one batch. Passes of one relay never overlap. */
  async flush(): Promise<OutboxRelayResult> {
    return (await this.passes.next()).result;
  }

  /** Passes until one publishes nothing (the outbox is empty, or only failing rows are left). */
  async drain(maxPasses = DRAIN_CEILING): Promise<OutboxRelayResult> {
    const total = { published: 0, failed: 0, parked: 0 };
    for (let pass = 0; pass < Math.min(maxPasses, DRAIN_CEILING); pass++) {
      const result = await this.flush();
      total.published += result.published;
      total.failed += result.failed;
      total.parked += result.parked;
      if (result.published === 0) break;
    }
    return total;
  }

  /** Runs passes in the background until stop(): back to back while batches are full, else every pollIntervalMs. */
  start(): void {
    this.passes.start();
  }

  /** Asks a sleeping background loop for a pass now (e.g. right after a commit that wrote to the outbox). */
  wake(): void {
    this.passes.wake();
  }

  /** Stops the background loop after the pass under way (its rows are marked before this resolves). */
  async stop(): Promise<void> {
    await this.passes.stop();
    await this.ownProducers?.close();
  }

  /** Counters since creation and the outage under way, if any. */
  describe(): OutboxRelayState {
    return {
      running: this.passes.started,
      brokerFailingSince: this.broker.failingSince,
      databaseFailingSince: this.database.failingSince,
      lastError: this.broker.firstError ?? this.database.firstError,
      ...this.counts,
      parkingAvailable: this.parkable,
    };
  }

  /** The parked rows of this relay's table, oldest first (at most `limit`, default 100), and how many there are. */
  parked(options: { limit?: number } = {}): Promise<ParkedOutboxListing> {
    return listParkedOutboxRows(this.options.pool, { table: this.table, ...options });
  }

  /**
   * Re-queues parked rows (`{ ids }` by `meta.id`, or `{ all: true }`; `topic` narrows): pending again, due now,
   * with a fresh attempt budget. Resolves to the `meta.id`s re-queued; wakes the background loop.
   */
  async requeue(selection: OutboxRequeueSelection): Promise<string[]> {
    const ids = await requeueParkedOutboxRows(this.options.pool, { ...selection, table: this.table });
    if (ids.length > 0) this.wake();
    return ids;
  }

  /** A pass, with a failing database reported once when it starts failing and once when it answers again. */
  private async trackedPass(): Promise<PassOutcome> {
    let outcome: PassOutcome;
    try {
      outcome = await this.passOnce();
    } catch (error) {
      const text = errorText(error);
      const report = this.database.failed(Date.now(), 1, text);
      if (report) {
        this.logger.warn(
          `outbox relay pass failed, rows stay pending: ${text}. Passes go on every ${this.pollIntervalMs} ms; ` +
            'one line when they succeed again',
        );
      } else this.logger.debug?.(`outbox relay pass failed again: ${text}`);
      throw error;
    }
    const report = this.database.succeeded(Date.now(), true);
    if (report?.kind === 'up') {
      this.logger.warn(
        `outbox relay passes succeed again after ${seconds(report.downForMs)} s (${report.failedAttempts} failed pass(es))`,
      );
    }
    return outcome;
  }

  private async passOnce(): Promise<PassOutcome> {
    if (this.metricsEnabled) {
      this.metricsReady ??= loadOpenTelemetry().then(
        () => {
          this.metrics = OutboxMetrics.create();
        },
        () => undefined,
      );
      await this.metricsReady;
    }
    const limit = this.probing ? 1 : this.batchSize;
    if (this.headersColumn !== true && Date.now() - this.headersCheckedAt >= HEADERS_RECHECK_MS) {
      this.headersColumn = await outboxHasHeaders(this.options.pool, this.table);
      this.headersCheckedAt = Date.now();
    }
    if (this.dedup) {
      const { producerName, takeOverAfterMs } = this.dedup;
      await stampOutboxRows(this.options.pool, this.table, producerName, limit, takeOverAfterMs);
    }
    const claim = await claimOutboxRows(
      this.options.pool,
      this.table,
      limit,
      this.headersColumn === true,
      this.dedup?.producerName,
    );
    const result: OutboxRelayResult = { published: 0, failed: 0, parked: 0 };
    const brokerFailures: OutboxRow[] = [];
    let brokerError = '';
    let republished = false;
    try {
      if (this.parkable === null) this.parkable = await claim.canPark();
      if (claim.rows.length === 0) {
        await claim.commit();
      } else {
        // Started together: sends to one producer leave in the order they were issued, which is row order (with
        // deduplication, sequence id order, as the broker needs).
        const outcomes = await Promise.allSettled(
          claim.rows.map((row) => sendRow(this.producers, row, this.publishTimeoutMs)),
        );
        const lastSent = outcomes.map((outcome) => outcome.status).lastIndexOf('fulfilled');
        const published: OutboxRow[] = [];
        for (const [index, outcome] of outcomes.entries()) {
          const row = claim.rows[index]!;
          if (outcome.status === 'fulfilled') {
            published.push(row);
            if (row.attempts > 0) republished = true;
            continue;
          }
          const keepStamp = index > lastSent || mayBeStored(outcome.reason);
          const parked = await this.settleFailure(claim, row, outcome.reason, keepStamp);
          if (parked) result.parked += 1;
          else result.failed += 1;
          if (outboxFailureCause(outcome.reason) === 'broker') {
            if (brokerFailures.length === 0) brokerError = errorText(outcome.reason);
            brokerFailures.push(row);
          }
        }
        await claim.markPublished(published.map((row) => row.seq));
        await claim.commit();
        result.published = published.length;
        for (const row of published) this.metrics?.published(row.topic);
      }
    } catch (error) {
      await claim.abandon(error);
      throw error;
    }
    this.counts.published += result.published;
    this.counts.failed += result.failed;
    this.counts.parked += result.parked;
    this.probing = brokerFailures.length > 0 && result.published === 0;
    const now = Date.now();
    this.reportBroker(
      brokerFailures.length > 0
        ? this.broker.failed(
            now,
            brokerFailures.length,
            brokerError,
            brokerFailures.map((row) => row.seq),
          )
        : this.broker.succeeded(now, republished),
    );
    return { result, claimed: claim.rows.length, limit, brokerFailures: brokerFailures.length };
  }

  /**
   * Marks a failed row (parked, or due again after the backoff); true when it was parked. A stamped row after the
   * last one sent, or one whose send timed out, keeps its stamp (see OutboxClaim.markFailed).
   */
  private async settleFailure(
    claim: OutboxClaim,
    row: OutboxRow,
    reason: unknown,
    keepStamp: boolean,
  ): Promise<boolean> {
    const text = errorText(reason);
    const cause = outboxFailureCause(reason);
    this.metrics?.failed(row.topic, cause);
    const attempt = row.attempts + 1;
    let decision = decideFailedRow(cause, row.attempts, this.parkAfterAttempts);
    if (decision.park && this.parkable !== true) {
      this.parkable = await claim.canPark(); // the table may have been migrated since
      if (!this.parkable) {
        this.warnParkingUnavailable(row);
        decision = decideFailedRow('broker', row.attempts, this.parkAfterAttempts);
      }
    }
    if (decision.park) {
      await claim.markParked(row.seq, text);
      this.metrics?.parked(row.topic);
      this.logger.warn(
        `outbox row ${row.messageId} to ${row.topic} parked after ${attempt} attempt(s), no longer tried: ${text}. ` +
          'List parked rows with relay.parked() or `babelqueue-pulsar outbox parked`, re-queue them with ' +
          'relay.requeue() or `babelqueue-pulsar outbox requeue`',
      );
      return true;
    }
    await claim.markFailed(row.seq, text, decision.retryInMs, keepStamp);
    this.logger.debug?.(
      `outbox row ${row.messageId} to ${row.topic} not published (attempt ${attempt}, ${cause === 'row' ? 'the row is at fault' : 'broker'}; ` +
        `next try in ${decision.retryInMs} ms): ${text}`,
    );
    return false;
  }

  private warnParkingUnavailable(row: OutboxRow): void {
    if (this.parkingWarned) return;
    this.parkingWarned = true;
    this.logger.error(
      `outbox table ${this.table} has no parked_at column (it was created before parking existed), so row ` +
        `${row.messageId}, which would be parked, is tried again instead. Upgrade the table with ` +
        `\`${outboxParkingMigrationSql(this.table)}\` (part of outboxMigrationSql(); \`outbox: { migrate: true }\` runs it)`,
    );
  }

  private reportBroker(report: OutageReport | null): void {
    if (report?.kind === 'down') {
      this.logger.warn(
        `outbox relay cannot publish: ${report.error}. Rows stay pending and are retried (one at a time while ` +
          'nothing goes through); per-row detail at debug level, one line when it recovers',
      );
    } else if (report?.kind === 'up') {
      this.logger.warn(
        `outbox relay publishes again after ${seconds(report.downForMs)} s: ${report.failedAttempts} failed ` +
          `attempt(s) on ${report.rows} row(s) during the outage; those rows are published or pending, none dropped`,
      );
    }
  }
}
