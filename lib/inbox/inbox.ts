import type { SqlQueryable } from '../idempotency/sql-table.js';

/** What an inbox did with a delivery: ran its handler (and committed), or skipped it as already handled. */
export type InboxOutcome = 'ran' | 'duplicate';

/** What `ctx.publish()` passes on to the outbox (the outbox's own write options). */
export interface InboxPublishOptions {
  /** Topic the relay publishes to; defaults to the outbox's topic. */
  topic?: string;
  /** Continue this trace; the handled message's trace when absent. */
  traceId?: string;
  /** The follow-up's `meta.id`; a new UUID when absent. */
  id?: string;
  /** Partition key the relay publishes with. */
  key?: string;
}

/** The handler's transaction, as its context hands it over. */
export interface InboxTransaction {
  /** The open transaction: a `pg` PoolClient after BEGIN (for an InMemoryInbox, what its options gave). */
  readonly client: SqlQueryable;
  /** Writes a follow-up message into the outbox in this transaction; resolves to its `meta.id`. */
  publish(urn: string, data: object, options?: InboxPublishOptions): Promise<string>;
}

/**
 * Runs a handler in a transaction that first records the message id for the subscription: the record and the
 * handler's work commit together, so an id committed once never runs again for that subscription.
 */
export interface Inbox {
  /**
   * Runs `work` in a transaction unless `id` was committed before for `subscription` (then `duplicate`, without
   * running). A copy of an id being handled now waits for that transaction's end. A `work` that throws rolls back
   * and the error is rethrown. An undefined id runs in a transaction without an inbox record.
   */
  run(
    subscription: string,
    id: string | undefined,
    work: (transaction: InboxTransaction) => Promise<void>,
  ): Promise<InboxOutcome>;
}

/** The write side of an outbox, as `BabelOutbox` has it: inserts a message in the caller's transaction. */
export interface InboxOutboxWriter {
  write(transaction: SqlQueryable, urn: string, data: object, options?: InboxPublishOptions): Promise<string>;
}

/** True for an object with `run(subscription, id, work)`. */
export function isInbox(value: unknown): value is Inbox {
  return typeof value === 'object' && value !== null && typeof (value as Partial<Inbox>).run === 'function';
}

/**
 * `inbox: { store, every }` on the module or server: `store` runs the inbox handlers (a PostgresInbox, or an
 * InMemoryInbox in tests); `every: true` makes every handler one, else only those with `inbox: true`
 * (`@BabelHandler` or the `handlers` option).
 */
export interface InboxOptions {
  store: Inbox;
  every?: boolean;
}

/** Checks `inbox` options; `raise` reports the problem the way the calling option table does. */
export function checkInboxOptions(
  value: unknown,
  name: string,
  raise: (message: string, kind: 'type') => never,
): InboxOptions | undefined {
  if (value === undefined) return undefined;
  const given = value as Partial<InboxOptions> | null;
  if (typeof given !== 'object' || given === null || !isInbox(given.store))
    return raise(`${name} must be { store, every? } with a store such as new PostgresInbox({ pool })`, 'type');
  if (given.every !== undefined && typeof given.every !== 'boolean')
    return raise(`${name}.every must be true or false`, 'type');
  return { store: given.store, ...(given.every !== undefined && { every: given.every }) };
}
