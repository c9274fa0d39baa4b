export { BabelOutbox } from './outbox.js';
export type { BabelOutboxOptions, OutboxWriteOptions } from './outbox.js';
export { OutboxRelay } from './relay.js';
export type { OutboxRelayResult, OutboxRelayState } from './relay.js';
export type { OutboxRelayLogger, OutboxRelayOptions, OutboxRelayTuning } from './relay-options.js';
export type { OutboxPool, OutboxPoolClient } from './relay-store.js';
export type { OutboxSqlRunner } from './sql.js';
export { listParkedOutboxRows, requeueParkedOutboxRows } from './parked.js';
export type { OutboxRequeueSelection, ParkedOutboxListing, ParkedOutboxRow } from './parked.js';
export { outboxBackoffMs } from './backoff.js';
export { DEFAULT_OUTBOX_TABLE, outboxMigrationSql, outboxParkingMigrationSql } from './table.js';
export { DEFAULT_SCHEDULE_TABLE, scheduleMigrationSql } from './schedule-table.js';
export { outboxDeduplicationMigrationSql, outboxHeadersMigrationSql } from './table.js';
export type { OutboxRelayDeduplication } from './relay-dedup.js';
export { ScheduleDispatcher } from './schedule-dispatcher.js';
export type { ScheduleDispatchResult, ScheduleDispatcherState } from './schedule-dispatcher.js';
export type { ScheduleDispatcherOptions, ScheduleDispatcherTuning } from './schedule-dispatcher-options.js';
export { SCHEDULE_PROPERTIES } from '../schedule/index.js';
export type {
  MissedTickPolicy,
  ScheduledMessage,
  ScheduleHandle,
  ScheduleListQuery,
  ScheduleOptions,
  ScheduleState,
} from '../schedule/index.js';
export { BabelSchedule } from '../schedule/index.js';
export type { DeclaredScheduleOptions } from '../schedule/index.js';
