import { BabelNonRetriableError, BabelQueueError } from '../envelope/index.js';
import { describeValue } from '../describe-value.js';
import type { Outcome } from './decision-types.js';
import type { SubscriptionType } from '../pulsar/client-types.js';

/** `ctx.retry(options)`: how the handler wants its message retried. */
export interface RetryRequestOptions {
  /**
   * How long the retry copy waits on the broker, whole ms >= 0, instead of the retry policy's delay for this copy
   * (0 = due at once). Needs retry 'republish' on a Shared or KeyShared subscription when above 0.
   */
  delayMs?: number;
  /** Why: the error text of the failure line and, once the attempts are used up, of the dead-letter record. */
  reason?: string;
}

/** What a handler asked for with `ctx.retry()` or `ctx.deadLetter()`, before it returned. */
export type SettleRequest =
  { kind: 'retry'; delayMs?: number; reason?: string } | { kind: 'dead-letter'; reason: string };

/**
 * The failure a `ctx.retry()` is settled as: retriable, whatever the classification says. Its message is the
 * reason given, so the retry's log line and an exhausted message's dead-letter record read as for a thrown error.
 */
export class RetryRequestedError extends BabelQueueError {
  constructor(message: string) {
    super(message);
    this.name = 'RetryRequestedError';
  }
}

/**
 * Thrown by the server once a handler that asked for a settlement returned, so that what wraps the handler
 * (idempotency, metrics, spans) counts the delivery as not handled; the request itself decides the settlement.
 */
export class RequestedSettlement extends BabelQueueError {
  constructor(readonly request: SettleRequest) {
    super(
      request.kind === 'retry'
        ? `the handler asked for a retry${request.reason === undefined ? '' : `: ${request.reason}`}`
        : `the handler asked for a dead letter: ${request.reason}`,
    );
    this.name = 'RequestedSettlement';
  }
}

/**
 * A settle request this subscription cannot honour (a delayed retry where Pulsar ignores delivery times): retrying
 * cannot help, so the message is dead-lettered at once with this reason, unless the handler catches it.
 */
export class SettleRequestRefusedError extends BabelNonRetriableError {
  constructor(message: string) {
    super(message);
    this.name = 'SettleRequestRefusedError';
  }
}

/** The error of a settle call made once its message was settled (the handler passed its time-out). */
export function lateSettleError(call: string): BabelQueueError {
  return new BabelQueueError(
    `${call} was called after the message was settled (the handler passed its time-out): it has no effect`,
  );
}

const DEFAULT_RETRY_REASON = 'the handler asked for a retry (ctx.retry())';

/**
 * The outcome a request is settled as (pure): a retry is a retriable failure (its delay, when given, replaces the
 * policy's for that copy); a dead-letter request the failure a `BabelNonRetriableError(reason)` thrown by the
 * handler would be, so both leave the same record as their thrown counterpart.
 */
export function outcomeOfRequest(request: SettleRequest): Extract<Outcome, { kind: 'failed' }> {
  if (request.kind === 'dead-letter')
    return { kind: 'failed', reason: 'failed', error: new BabelNonRetriableError(request.reason), retriable: false };
  return {
    kind: 'failed',
    reason: 'failed',
    error: new RetryRequestedError(request.reason ?? DEFAULT_RETRY_REASON),
    retriable: true,
    ...(request.delayMs !== undefined && { delayMs: request.delayMs }),
  };
}

/** Pulsar honours delivery times, and counts redeliveries, only on these subscription types. */
export const honoursDeliveryTimes = (type: SubscriptionType): boolean => type === 'Shared' || type === 'KeyShared';

/**
 * Why a retry delay cannot be honoured (null when it can): the one rule for a retry policy, a handler's policy and
 * `ctx.retry({ delayMs })`. A delay needs a re-published copy, on a subscription where Pulsar honours delivery times.
 */
export function delayedRetryRefusal(retryByNack: boolean, subscriptionType: SubscriptionType): string | null {
  if (retryByNack)
    return "needs retry 'republish' (a negative acknowledgement cannot carry a delay; use nackRedeliverTimeoutMs)";
  if (!honoursDeliveryTimes(subscriptionType))
    return `needs a Shared or KeyShared subscription (got ${subscriptionType}): Pulsar honours delivery times only there`;
  return null;
}

function nonBlank(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new TypeError(`${what} must be a non-blank string, got ${describeValue(value)}`);
  return value;
}

/** Checks the options of `ctx.retry()` (pure), with an error naming the option and what is allowed. */
export function checkRetryRequest(options: unknown, delayRefusal: string | null): SettleRequest {
  if (options === undefined) return { kind: 'retry' };
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`ctx.retry() options must be an object { delayMs?, reason? }, got ${describeValue(options)}`);
  const { delayMs, reason, ...rest } = options as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw new TypeError(`ctx.retry() option(s) ${unknown.join(', ')} unknown; allowed: delayMs, reason`);
  if (delayMs !== undefined) {
    if (typeof delayMs !== 'number' || !Number.isSafeInteger(delayMs) || delayMs < 0)
      throw new RangeError(`ctx.retry() delayMs must be a whole number of ms >= 0, got ${describeValue(delayMs)}`);
    if (delayMs > 0 && delayRefusal !== null)
      throw new SettleRequestRefusedError(`ctx.retry() delayMs ${delayRefusal}`);
  }
  return {
    kind: 'retry',
    ...(delayMs !== undefined && { delayMs: delayMs as number }),
    ...(reason !== undefined && { reason: nonBlank(reason, 'ctx.retry() reason') }),
  };
}

const describeRequest = (request: SettleRequest): string =>
  request.kind === 'retry' ? 'ctx.retry()' : `ctx.deadLetter(${JSON.stringify(request.reason)})`;

/**
 * The requests of one delivery's handler. The first call decides: a second call (of either method) throws, and so
 * does a call once the message was settled (after a time-out). What the handler does after the first call,
 * throwing included, does not change how the message is settled (docs/pulsar-features.md#settling-from-the-handler).
 */
export class SettleRequests {
  private request: SettleRequest | null = null;
  private settled = false;
  private skipped = false;

  constructor(private readonly delayRefusal: string | null = null) {}

  retry(options?: RetryRequestOptions): void {
    this.record('ctx.retry()', () => checkRetryRequest(options, this.delayRefusal));
  }

  deadLetter(reason: string): void {
    this.record('ctx.deadLetter()', () => ({
      kind: 'dead-letter',
      reason: nonBlank(reason, 'ctx.deadLetter(reason): the reason'),
    }));
  }

  /** What was asked for so far (null: nothing). */
  get requested(): SettleRequest | null {
    return this.request;
  }

  /** Records that the handler was skipped: the message's id was already handled (idempotency, inbox). */
  markDuplicate(): void {
    this.skipped = true;
  }

  /** True when the message was acknowledged as a duplicate, without running its handler. */
  get duplicate(): boolean {
    return this.skipped;
  }

  /** True once the message was settled: a later request has no effect. */
  get isSettled(): boolean {
    return this.settled;
  }

  /** Ends the handler's say: returns its request, and later calls throw. */
  settle(): SettleRequest | null {
    this.settled = true;
    return this.request;
  }

  private record(call: string, make: () => SettleRequest): void {
    if (this.settled) throw lateSettleError(call);
    if (this.request !== null)
      throw new BabelQueueError(
        `${call} was called after ${describeRequest(this.request)}: the first call decides how the message is settled`,
      );
    this.request = make();
  }
}
