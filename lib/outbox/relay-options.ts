import type { Logger } from '@nestjs/common';
import type { OptionsInput } from '../options/option-table.js';
import { flag, integer } from '../options/validators.js';
import type { ProducerSource } from '../nest/server/server-options.js';
import type { OutboxPool } from './relay-store.js';
import type { OutboxRelayDeduplication } from './relay-dedup.js';

/**
 * The relay's tuning (`new OutboxRelay({ pool, producers, ...tuning })`, or the module's `outbox: { relay }`).
 * docs/configuration.md renders this table (`npm run readme`).
 */
export const outboxRelayOptionTable = {
  /**
   * Rows claimed and published per pass. While the broker does not answer, a pass tries one row only, so an
   * outage is probed instead of hammered.
   * @defaultValue `100`
   */
  batchSize: integer({ min: 1, fallback: 100 }),
  /**
   * Pause between passes when the last one did not publish a full batch (or the broker failed).
   * @defaultValue `500`
   */
  pollIntervalMs: integer({ min: 1, fallback: 500 }),
  /**
   * A publish not stored by the broker within this time counts as failed (a broker failure: the row is tried
   * again, it is not parked).
   * @defaultValue `10000`
   */
  publishTimeoutMs: integer({ min: 1, fallback: 10_000 }),
  /**
   * A row that fails for a reason of its own (its body is not an envelope, its topic cannot exist, the broker
   * refuses its size) is parked once it has been tried this many times: kept in the table with its error, no
   * longer tried, listed and re-queued with `relay.parked()` / `relay.requeue()` or `babelqueue-pulsar outbox`
   * (docs/outbox.md#parked-rows). A broker outage never parks a row.
   * @defaultValue `5`
   */
  parkAfterAttempts: integer({ min: 1, fallback: 5 }),
  /**
   * The relay's OpenTelemetry counters (`babelqueue.outbox.published`, `babelqueue.outbox.failed`,
   * `babelqueue.outbox.parked`), when `@opentelemetry/api` is installed and a MeterProvider registered. The
   * module passes its `telemetry.metrics`.
   * @defaultValue `true`
   */
  metrics: flag(true),
};

/** The keys of the tuning table: what the module's `outbox.relay` accepts. */
export const OUTBOX_RELAY_TUNING_KEYS = Object.keys(outboxRelayOptionTable);

/** The relay's tuning, as given. */
export type OutboxRelayTuning = OptionsInput<typeof outboxRelayOptionTable>;

/** What a relay logs with: Nest's Logger, or anything with these methods (`debug` optional). */
export type OutboxRelayLogger = Pick<Logger, 'log' | 'warn' | 'error'> & Partial<Pick<Logger, 'debug'>>;

export interface OutboxRelayOptions extends OutboxRelayTuning {
  /** A `pg` Pool on the database of the outbox table (TypeORM: `dataSource.driver.master`). */
  pool: OutboxPool;
  /**
   * Where producers come from: the module's producer pool, or `new BabelProducerPool(pulsarClient)`. Required
   * unless `deduplication` is given (the relay then makes its own).
   */
  producers?: ProducerSource;
  /** The outbox table; default `babelqueue_outbox`. */
  table?: string;
  /** Per-row detail goes to `debug` (when the logger has it); outages, recoveries and parked rows to `warn`. */
  logger?: OutboxRelayLogger;
  /**
   * Sends through producers of a stable name, each row with a sequence id stamped on it first, so that a broker
   * with deduplication on drops a row sent again after a crash (native client; docs/exactly-once.md). `producers`
   * is then not used.
   */
  deduplication?: OutboxRelayDeduplication;
}
