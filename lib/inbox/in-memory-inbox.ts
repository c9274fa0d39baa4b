import { randomUUID } from 'node:crypto';
import { BabelQueueError } from '../envelope/index.js';
import type { SqlQueryable } from '../idempotency/sql-table.js';
import type { Inbox, InboxOutcome, InboxPublishOptions, InboxTransaction } from './inbox.js';

/** A follow-up an inbox handler published, once its work "committed". */
export interface InMemoryFollowUp {
  urn: string;
  data: object;
  options: InboxPublishOptions & { id: string };
}

export interface InMemoryInboxOptions {
  /** What `ctx.getTransaction()` returns in handlers (your test double); default: one whose query() throws. */
  transaction?: SqlQueryable;
  /** Called with each follow-up after its handler returned (e.g. the app's BabelPulsarClient.publish). */
  publish?: (urn: string, data: object, options: InboxPublishOptions & { id: string }) => Promise<unknown>;
}

const NO_DATABASE: SqlQueryable = {
  query: () =>
    Promise.reject(new BabelQueueError('InMemoryInbox has no database: pass new InMemoryInbox({ transaction })')),
};

/**
 * The inbox's semantics in memory, for tests without PostgreSQL: an id handled once for a subscription is skipped,
 * a copy of an id being handled waits for it, a handler that throws leaves nothing behind (its follow-ups are
 * dropped), and follow-ups exist only for handlers that returned (`followUps`, and the `publish` option).
 */
export class InMemoryInbox implements Inbox {
  /** Every follow-up of a handler that returned, in order. */
  readonly followUps: InMemoryFollowUp[] = [];
  private readonly handled = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly transaction: SqlQueryable;
  private readonly forward: InMemoryInboxOptions['publish'];

  constructor(options: InMemoryInboxOptions = {}) {
    this.transaction = options.transaction ?? NO_DATABASE;
    this.forward = options.publish;
  }

  /** True once `id` was handled for `subscription`. */
  has(subscription: string, id: string): boolean {
    return this.handled.has(InMemoryInbox.key(subscription, id));
  }

  async run(
    subscription: string,
    id: string | undefined,
    work: (transaction: InboxTransaction) => Promise<void>,
  ): Promise<InboxOutcome> {
    const key = id === undefined ? undefined : InMemoryInbox.key(subscription, id);
    // Copies of one id queue behind each other, as they would behind PostgreSQL's row lock.
    const before = key === undefined ? undefined : this.running.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const queued = (before ?? Promise.resolve()).then(() => mine);
    if (key !== undefined) this.running.set(key, queued);
    try {
      await before;
      if (key !== undefined && this.handled.has(key)) return 'duplicate';
      const pending: InMemoryFollowUp[] = [];
      await work({
        client: this.transaction,
        publish: async (urn, data, options = {}) => {
          const followUp = { urn, data, options: { ...options, id: options.id ?? randomUUID() } };
          pending.push(followUp);
          return followUp.options.id;
        },
      });
      // "Commit": the id is handled and the follow-ups exist, together.
      if (key !== undefined) this.handled.add(key);
      this.followUps.push(...pending);
      for (const followUp of pending) await this.forward?.(followUp.urn, followUp.data, followUp.options);
      return 'ran';
    } finally {
      done();
      if (key !== undefined && this.running.get(key) === queued) this.running.delete(key);
    }
  }

  private static key(subscription: string, id: string): string {
    return `${subscription}\u0000${id}`;
  }
}
