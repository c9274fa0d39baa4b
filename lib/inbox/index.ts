export {
  isInbox,
  checkInboxOptions,
  type InboxOptions,
  type Inbox,
  type InboxOutboxWriter,
  type InboxOutcome,
  type InboxPublishOptions,
  type InboxTransaction,
} from './inbox.js';
export {
  PostgresInbox,
  inboxMigrationSql,
  DEFAULT_INBOX_TABLE,
  type InboxConnection,
  type InboxPool,
  type PostgresInboxOptions,
} from './postgres-inbox.js';
export { InMemoryInbox, type InMemoryFollowUp, type InMemoryInboxOptions } from './in-memory-inbox.js';
export type { SqlQueryable } from '../idempotency/sql-table.js';
