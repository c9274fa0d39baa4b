import type { Type } from '@nestjs/common';
import { BaseRpcContext } from '@nestjs/microservices';
import type { Envelope } from '../../envelope/index.js';
import type { PulsarMessage } from '../../pulsar/client-types.js';
import { partitionOf } from '../../pulsar/topic-name.js';
import { isReplay } from '../../pulsar/replay-property.js';
import type { RetryRequestOptions, SettleRequests } from '../../consumer/settle-request.js';
import { BabelQueueError } from '../../envelope/errors.js';
import type { SqlQueryable } from '../../idempotency/sql-table.js';
import type { InboxPublishOptions, InboxTransaction } from '../../inbox/inbox.js';

type BabelContextArgs = [envelope: Envelope, message: PulsarMessage, topic: string, urn: string];

/** Where a handler is declared: its controller class and method (what the failure relay needs to know). */
export interface HandlerRef {
  owner: Type<unknown>;
  method: string | symbol;
}

const HANDLER = Symbol('babelqueue.handler');
const REQUESTS = Symbol('babelqueue.settleRequests');
const TRANSACTION = Symbol('babelqueue.inboxTransaction');

interface TransportDetails {
  [HANDLER]?: HandlerRef | undefined;
  [REQUESTS]?: SettleRequests;
  [TRANSACTION]?: InboxTransaction | undefined;
}

/** Hands the inbox's transaction to the handler's context while the handler runs (undefined: taken back). */
export function withTransaction(context: BabelContext, transaction: InboxTransaction | undefined): void {
  (context as unknown as TransportDetails)[TRANSACTION] = transaction;
}

function transactionOf(context: BabelContext, call: string): InboxTransaction {
  const transaction = (context as unknown as TransportDetails)[TRANSACTION];
  if (!transaction)
    throw new BabelQueueError(
      `${call} works only in an inbox handler, while it runs (docs/exactly-once.md#the-inbox): opt in with ` +
        '@BabelHandler(urn, { inbox: true }) or the inbox option',
    );
  return transaction;
}

/**
 * The context of a message for the handler `handler`, taking its settle requests into `requests` (both kept off
 * the public type: the transport's own detail).
 */
export function contextFor(
  args: BabelContextArgs,
  handler: HandlerRef | undefined,
  requests?: SettleRequests,
): BabelContext {
  const context = withHandler(new BabelContext(args), handler);
  if (requests) (context as unknown as TransportDetails)[REQUESTS] = requests;
  return context;
}

/** Records which handler a context (single or batch) is made for, for the failure relay. */
export function withHandler<C extends object>(context: C, handler: HandlerRef | undefined): C {
  (context as unknown as TransportDetails)[HANDLER] = handler;
  return context;
}

export function handlerOf(context: object): HandlerRef | undefined {
  return (context as unknown as TransportDetails)[HANDLER];
}

/** True when the handler of this context asked for a retry or a dead letter (so it did not handle the message). */
export function settleRequested(context: BabelContext): boolean {
  return ((context as unknown as TransportDetails)[REQUESTS]?.requested ?? null) !== null;
}

/** Records that the handler of this context was skipped as a duplicate (the settled event says so). */
export function markDuplicate(context: BabelContext): void {
  (context as unknown as TransportDetails)[REQUESTS]?.markDuplicate();
}

/** True once the message of this context was settled (its handler passed its time-out, or it returned). */
export function wasSettled(context: BabelContext): boolean {
  return (context as unknown as TransportDetails)[REQUESTS]?.isSettled ?? false;
}

function requestsOf(context: BabelContext, call: string): SettleRequests {
  const requests = (context as unknown as TransportDetails)[REQUESTS];
  if (!requests)
    throw new Error(`${call} works only in a handler that BabelPulsarServer called (this context was made elsewhere)`);
  return requests;
}

/** The `@Ctx()` of a @BabelHandler method. */
export class BabelContext extends BaseRpcContext<BabelContextArgs> {
  /** The decoded envelope, with attempts reconciled from bq-attempts, the body and the redelivery count. */
  getEnvelope(): Envelope {
    return this.args[0];
  }

  /** The raw Pulsar message (native or WebSocket client). */
  getMessage(): PulsarMessage {
    return this.args[1];
  }

  /** Every property of the message, the bq-* projection and any extra headers. */
  getProperties(): Record<string, string> {
    return this.args[1].getProperties();
  }

  /** The URN that routed the message (bq-job, else the body's). */
  getUrn(): string {
    return this.args[3];
  }

  getTraceId(): string {
    return this.args[0].trace_id;
  }

  /** Reconciled attempts: 0 on a first delivery, n after n earlier failed deliveries. */
  getAttempts(): number {
    return this.args[0].attempts;
  }

  /**
   * The topic the message was consumed from, as configured: on a partitioned topic the logical name (`orders`),
   * never one partition. A topic found by a `topicsPattern` is named the way the pattern is written (`events-.+`
   * finds `events-shipping`; `persistent://public/default/events-.+` gives the full name). `getPartition()` tells
   * which partition the message came from.
   */
  getTopic(): string {
    return this.args[2];
  }

  /** The partition the message came from, -1 on a non-partitioned topic (the same on both clients). */
  getPartition(): number {
    return partitionOf(this.args[1].getTopicName());
  }

  /** The message's partition key ('' when it has none): what Key_Shared and partition routing use. */
  getPartitionKey(): string {
    return this.args[1].getPartitionKey();
  }

  /**
   * True when an operator redrove this message with `bypass` (the `bq-replay-bypass` property): the handler should
   * skip external side effects that already happened the first time.
   */
  isReplay(): boolean {
    return isReplay(this.args[1].getProperties());
  }

  /**
   * Settles the message as a retriable failure once the handler returns, without throwing: a retry copy (or a
   * negative acknowledgement) with the usual attempt count, the dead-letter topic once `maxAttempts` is reached.
   * `delayMs` replaces the retry policy's delay for this copy. The first of `retry()` / `deadLetter()` decides;
   * a second call throws (docs/pulsar-features.md#settling-from-the-handler).
   */
  retry(options?: RetryRequestOptions): void {
    requestsOf(this, 'ctx.retry()').retry(options);
  }

  /**
   * Settles the message as a failure that retrying cannot help once the handler returns: the dead-letter record a
   * thrown `BabelNonRetriableError(reason)` would leave, at once.
   */
  deadLetter(reason: string): void {
    requestsOf(this, 'ctx.deadLetter()').deadLetter(reason);
  }

  /**
   * The open transaction an inbox handler runs in (docs/exactly-once.md#the-inbox): with PostgresInbox, the `pg`
   * PoolClient after BEGIN (type it as such: `ctx.getTransaction<PoolClient>()`). The library commits it once the
   * handler returned, then acknowledges; do not commit or roll back yourself. Throws outside an inbox handler.
   */
  getTransaction<T extends SqlQueryable = SqlQueryable>(): T {
    return transactionOf(this, 'ctx.getTransaction()').client as T;
  }

  /**
   * Writes a follow-up message into the outbox in the handler's transaction, continuing this message's trace: it
   * exists if and only if the handler's work commits, and the outbox relay sends it. Resolves to its `meta.id`.
   * Throws outside an inbox handler.
   */
  async publish(urn: string, data: object, options: InboxPublishOptions = {}): Promise<string> {
    return transactionOf(this, 'ctx.publish()').publish(urn, data, { traceId: this.getTraceId(), ...options });
  }
}
