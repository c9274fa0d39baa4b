import { describeValue } from '../../describe-value.js';
import {
  OUTBOX_RELAY_TUNING_KEYS,
  outboxRelayOptionTable,
  type OutboxRelayTuning,
} from '../../outbox/relay-options.js';
import type { OutboxPool } from '../../outbox/relay-store.js';
import {
  SCHEDULE_DISPATCHER_TUNING_KEYS,
  scheduleDispatcherOptionTable,
  type ScheduleDispatcherTuning,
} from '../../outbox/schedule-dispatcher-options.js';
import { DEFAULT_SCHEDULE_TABLE } from '../../outbox/schedule-table.js';
import { checkOutboxTable, DEFAULT_OUTBOX_TABLE } from '../../outbox/table.js';
import { checkKnownKeys, isPlainObject, resolveOptions, type RaiseOptionError } from '../../options/option-table.js';

export interface BabelQueueOutboxOptions {
  pool: OutboxPool;
  /** The outbox table; default `babelqueue_outbox`. */
  table?: string;
  /** Create the table, or upgrade it, at start-up (outboxMigrationSql, idempotent); default false. */
  migrate?: boolean;
  /** The relay: on by default; `false` turns it off, an object tunes it (docs/configuration.md, the outbox relay). */
  relay?: boolean | OutboxRelayTuning;
  /**
   * Stored schedules (docs/scheduling.md): `true`, or `{ table?, batchSize?, pollIntervalMs?, missedAfterMs? }`.
   * Off by default. On, `BabelOutbox.schedule()` and `BabelPulsarClient.schedule()` work, `migrate` creates the
   * schedule table too, and wherever the relay runs a dispatcher moves due schedules into the outbox.
   */
  schedules?: boolean | (ScheduleDispatcherTuning & { table?: string });
  /**
   * The relay sends through producers of this stable name (unique per instance, the same after a restart), each
   * row with a sequence id stamped first, so that a broker with deduplication on for the topics' namespace drops a
   * row sent again after a crash. The native client only: the WebSocket API carries no sequence id
   * (docs/exactly-once.md#a-relay-the-broker-deduplicates).
   */
  deduplication?: { producerName: string; takeOverAfterMs?: number };
}

export interface ResolvedOutbox {
  table: string;
  pool?: OutboxPool;
  migrate: boolean;
  /** The relay's settings, or null when no relay runs here. */
  relay: OutboxRelayTuning | null;
  /** Stored schedules: their table and the dispatcher's settings; null when off. */
  schedules: { table: string; tuning: ScheduleDispatcherTuning } | null;
  /** The relay's producer name and take-over time when the broker deduplicates it; null when not. */
  deduplication: { producerName: string; takeOverAfterMs?: number } | null;
}

/** The `outbox` option: the table, the pool and the relay's settings (null when no relay runs here). */
export function resolveOutbox(outbox: unknown, name: string, raise: RaiseOptionError): ResolvedOutbox {
  if (outbox === undefined)
    return { table: DEFAULT_OUTBOX_TABLE, migrate: false, relay: null, schedules: null, deduplication: null };
  if (!isPlainObject(outbox)) return raise(`${name} must be an object: { pool, table?, relay?, schedules? }`, 'type');
  checkKnownKeys(outbox, ['pool', 'table', 'migrate', 'relay', 'schedules', 'deduplication'], name, raise);
  const options = outbox as unknown as BabelQueueOutboxOptions;
  if (typeof options.pool?.connect !== 'function')
    return raise(`${name}.pool must be a pg Pool (new Pool({ connectionString }))`, 'type');
  const table = checkOutboxTable(options.table, `${name}.table`, (message) => raise(message, 'type'));
  if (options.migrate !== undefined && typeof options.migrate !== 'boolean')
    return raise(`${name}.migrate must be true or false, got ${describeValue(options.migrate)}`, 'type');
  const relay = options.relay ?? true;
  if (typeof relay !== 'boolean' && !isPlainObject(relay))
    return raise(`${name}.relay must be true, false or { ${OUTBOX_RELAY_TUNING_KEYS.join(', ')} }`, 'type');
  if (isPlainObject(relay)) {
    checkKnownKeys(relay, OUTBOX_RELAY_TUNING_KEYS, `${name}.relay`, raise);
    resolveOptions(outboxRelayOptionTable, relay, `${name}.relay`, raise); // checked now, with the module's error
  }
  return {
    table,
    pool: options.pool,
    migrate: options.migrate ?? false,
    relay: relay === false ? null : relay === true ? {} : relay,
    schedules: resolveSchedules(options.schedules, `${name}.schedules`, raise),
    deduplication: resolveDeduplication(options.deduplication, `${name}.deduplication`, raise),
  };
}

function resolveDeduplication(value: unknown, name: string, raise: RaiseOptionError): ResolvedOutbox['deduplication'] {
  if (value === undefined) return null;
  const shape = `{ producerName, takeOverAfterMs? }`;
  if (!isPlainObject(value)) return raise(`${name} must be ${shape}`, 'type');
  checkKnownKeys(value, ['producerName', 'takeOverAfterMs'], name, raise);
  const { producerName, takeOverAfterMs } = value as { producerName?: unknown; takeOverAfterMs?: unknown };
  if (typeof producerName !== 'string' || producerName.trim() === '')
    return raise(
      `${name}.producerName must be a non-empty string, the same after every restart and different on every instance, got ${describeValue(producerName)}`,
      'type',
    );
  if (takeOverAfterMs === undefined) return { producerName };
  if (typeof takeOverAfterMs !== 'number' || !Number.isInteger(takeOverAfterMs) || takeOverAfterMs < 0)
    return raise(`${name}.takeOverAfterMs must be an integer >= 0, got ${describeValue(takeOverAfterMs)}`, 'type');
  return { producerName, takeOverAfterMs };
}

function resolveSchedules(schedules: unknown, name: string, raise: RaiseOptionError): ResolvedOutbox['schedules'] {
  if (schedules === undefined || schedules === false) return null;
  if (schedules === true) return { table: DEFAULT_SCHEDULE_TABLE, tuning: {} };
  const keys = ['table', ...SCHEDULE_DISPATCHER_TUNING_KEYS];
  if (!isPlainObject(schedules)) return raise(`${name} must be true, false or { ${keys.join(', ')} }`, 'type');
  checkKnownKeys(schedules, keys, name, raise);
  const { table, ...tuning } = schedules as ScheduleDispatcherTuning & { table?: unknown };
  resolveOptions(scheduleDispatcherOptionTable, tuning, name, raise); // checked now, with the module's error
  return {
    table: checkOutboxTable(table ?? DEFAULT_SCHEDULE_TABLE, `${name}.table`, (message) => raise(message, 'type')),
    tuning,
  };
}
