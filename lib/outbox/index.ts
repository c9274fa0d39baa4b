export { BabelOutbox } from './outbox.js';
export type { BabelOutboxOptions, OutboxWriteOptions } from './outbox.js';
export { OutboxRelay } from './relay.js';
export type { OutboxRelayOptions, OutboxRelayResult } from './relay.js';
export type { OutboxPool, OutboxPoolClient } from './relay-store.js';
export type { OutboxSqlRunner } from './sql.js';
export { outboxBackoffMs } from './backoff.js';
export { DEFAULT_OUTBOX_TABLE, outboxMigrationSql } from './table.js';
