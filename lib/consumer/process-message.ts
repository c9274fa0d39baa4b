import { InvalidEnvelopeError, SchemaVersionRejectedError, UnknownUrnError } from '../envelope/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import { BQ } from '../pulsar/binding.js';
import type { InboundMessage, Outcome, Settlement, SettlementPolicy } from './decision-types.js';
import { asError, callHookSafely } from './hooks.js';
import { withHandlerTimeout } from './handler-timeout.js';
import { inspect } from './inspect.js';
import { deadLetterLine, failureLevel, failureLine, failureOutcomeOf, type FailureOutcome } from './diagnostics.js';
import { laneKeyOf } from './key-lanes.js';
import type { OutcomeLine } from './outcome-lines.js';
import { countedAttempt, decideSettlement } from './settle.js';
import { outcomeOfRequest, RequestedSettlement, SettleRequests } from './settle-request.js';
import { escapeControls, indentedBlock, quoted } from '../text/untrusted-text.js';
import { errorReply, replyRequestOf, type ReplyBody } from '../pulsar/reply-binding.js';
import {
  isRetriableByDefault,
  settledEvent,
  type ProcessorContext,
  type ResolvedHandler,
  type SettledEvent,
  type SubscriptionPolicy,
} from './processor-context.js';
import { replyOf, sendReply } from './request-replies.js';
import { carryOut } from './settlement-io.js';
import { decideUnknownUrn, FAIL_ON_UNKNOWN_URN, type UnknownUrnStrategy } from './unknown-urn.js';

/**
 * The thin I/O layer around the pure decision functions: inspect, run the handler, decide, then
 * write the replacement (retry copy or dead-letter record) before acknowledging the original.
 */
export async function processMessage(
  message: PulsarMessage,
  ctx: ProcessorContext,
  /** Attempts already made by this consumer on this delivery (retries in place); they count like redeliveries. */
  attemptsInPlace = 0,
  /**
   * With `ctx.blockExhausted`: takes a keyed message that failed for good instead of settling it, with what settles
   * it once unblocked (see BlockedKeys).
   */
  onBlock?: (unblock: () => Promise<SettledEvent>) => void,
): Promise<SettledEvent> {
  const nackCount = ctx.retryProducer === null ? ctx.nackCount : undefined;
  // Only the nack mode's own count needs the id of every delivery (the id is a call into the native addon).
  const nackKey = nackCount ? messageIdText(message.getMessageId()) : '';
  const inbound: InboundMessage = {
    payload: message.getData(),
    properties: message.getProperties(),
    // The broker's count starts again after a restart or an unload; the consumer's own one does not.
    redeliveryCount: Math.max(message.getRedeliveryCount(), nackCount?.before(nackKey) ?? 0, attemptsInPlace),
    topic: ctx.topic,
  };
  const inspection = inspect(inbound);
  let settledFrom = inspection;
  const onError = (error: Error, envelope: Envelope | Record<string, never>) =>
    callHookSafely(ctx.logger, 'onError', () => ctx.hooks.onError?.(error, envelope, message));

  let outcome: Outcome = { kind: 'handled' };
  let urn: string | null = null;
  let envelope: Envelope | Record<string, never> = {};
  /** Set when the URN has no handler here: what its subscription's strategy made of this delivery. */
  let unknownUrn: UnknownUrnStrategy | undefined;
  /** The failure onError reports, called after the failure's log line so that a hook's own lines follow it. */
  let failure: Error | null = null;
  /** The handler was skipped: its message id was handled before (idempotency, inbox). */
  let duplicate = false;
  /** The URN's handler here, resolved once; null for a message no handler here runs. */
  let handler: ResolvedHandler | null = null;
  /** The handler asked for its dead letter (`ctx.deadLetter()`): its word decides, a blocked key never waits on it. */
  let askedForDeadLetter = false;
  if (inspection.kind === 'gate-rejected') {
    onError(new SchemaVersionRejectedError(inspection.received), {});
  } else if (inspection.kind === 'poison') {
    failure = new InvalidEnvelopeError(`poison message on ${ctx.topic}: ${inspection.reason}`);
  } else {
    urn = inspection.urn;
    envelope = inspection.envelope;
    for (const warning of inspection.warnings) ctx.logger.warn(escapeControls(warning));
    const { mismatch } = inspection;
    if (mismatch) {
      callHookSafely(ctx.logger, 'onRoutingMismatch', () =>
        ctx.hooks.onRoutingMismatch?.(mismatch.propertyUrn, mismatch.bodyUrn, inspection.envelope, message),
      );
    }
    const requests = new SettleRequests(ctx.delayedRetryRefusal ?? null);
    const resolution = ctx.resolve(inspection.urn);
    if (resolution === null) {
      unknownUrn = decideUnknownUrn(ctx.unknownUrn ?? FAIL_ON_UNKNOWN_URN, inbound.redeliveryCount);
      outcome = await settleUnknownUrn(unknownUrn, inspection.urn, inspection.envelope, message, ctx);
    } else if (resolution !== 'sibling') {
      // A URN a sibling subscription handles is its work: acknowledged here as handled.
      handler = resolution;
      if (ctx.pace) await ctx.pace();
      outcome = await runHandler(handler, inspection.urn, inspection.envelope, message, ctx, requests);
    }
    const requested = requests.settle();
    duplicate = requests.duplicate;
    askedForDeadLetter = requested?.kind === 'dead-letter';
    if (requested !== null) {
      // The handler's first word decides, whatever it did afterwards (docs/pulsar-features.md#settling-from-the-handler).
      if (outcome.kind === 'failed' && !(outcome.error instanceof RequestedSettlement))
        ctx.logger.warn(
          `handler for ${quoted(inspection.urn)} on ${ctx.topic} failed after asking for ${requested.kind === 'retry' ? 'a retry' : 'a dead letter'}: ` +
            `settled as asked; the failure was ${quoted(asError(outcome.error).message)}`,
        );
      outcome = outcomeOfRequest(requested);
    } else if (outcome.kind === 'failed' && !retriable(handler ?? ctx.policy, outcome.error)) {
      outcome = { ...outcome, retriable: false };
    }
    if (outcome.kind === 'failed') {
      // The handler got the decoded envelope itself and may have changed it; copies carry the data as it
      // arrived (docs/contract.md#retries), so a failure is settled from a fresh decode of the unchanged bytes.
      settledFrom = inspect(inbound);
      if (settledFrom.kind === 'dispatch') envelope = settledFrom.envelope;
      failure = asError(outcome.error);
    }
  }

  const request = ctx.reply && settledFrom.kind === 'dispatch' ? replyRequestOf(inbound.properties) : null;
  // The reply of a handled request is written before the request is settled: a reply that cannot be written makes
  // the attempt a failure (retried, then dead-lettered, as any other), so a request is never acknowledged unanswered
  // and a reply topic that refuses every write cannot keep a request coming back for ever.
  if (request && outcome.kind === 'handled' && urn !== null) {
    const body: ReplyBody = { status: 'ok', result: outcome.result };
    const refused = await sendReply(ctx, request, replyOf(urn, request, body, envelope));
    if (refused !== null) {
      outcome = { kind: 'failed', reason: 'failed', error: refused };
      settledFrom = inspect(inbound);
      if (settledFrom.kind === 'dispatch') envelope = settledFrom.envelope;
      failure = refused;
    }
  }

  const settings = handler ?? ctx.policy;
  // Spelled out, not spread: V8 (Node 20) gives an optimized `{ ...source, more }` a new hidden class on every
  // call, which costs a map allocation and a transition search per message.
  const policy: SettlementPolicy = {
    maxAttempts: settings.maxAttempts,
    retryBy: ctx.retryInPlace === true ? 'in-place' : ctx.retryProducer ? 'republish' : 'nack',
    deadLetter: ctx.deadLetterProducer !== null,
    now: ctx.now?.() ?? Date.now(),
    jitterSample: (ctx.random ?? Math.random)(),
  };
  if (settings.retryPolicy !== undefined) policy.retryPolicy = settings.retryPolicy;
  if (ctx.holdLastAttempts?.() === true) policy.holdLastAttempt = true;
  const settlement = decideSettlement(inbound, settledFrom, outcome, policy);
  const eventOf = (action: SettledEvent['action']): SettledEvent => {
    const made = settledEvent(ctx.topic, message, urn, action);
    if (unknownUrn !== undefined) made.unknownUrn = unknownUrn;
    if (outcome.kind === 'failed' && outcome.retriable === false) made.nonRetriable = true;
    return made;
  };
  const blocks =
    onBlock !== undefined &&
    ctx.blockExhausted === true &&
    (settlement.action === 'dead-letter' || settlement.action === 'drop') &&
    outcome.kind === 'failed' &&
    outcome.reason === 'failed' &&
    !askedForDeadLetter &&
    laneKeyOf(message) !== null;
  if (blocks) {
    // Kept unacknowledged: nothing is written until an operator unblocks the key, which settles it as below.
    const event = eventOf('block');
    event.reason = 'failed';
    const attempt = 'attempt' in settlement ? settlement.attempt : policy.maxAttempts;
    event.attempt = attempt;
    const line = { action: 'block' } as const;
    reportFailure(ctx, message, event, line, policy.maxAttempts, attempt, failure);
    if (failure !== null) onError(failure, envelope);
    onBlock(() => carryOutSettlement(eventOf(settlement.action), false));
    return event;
  }
  return carryOutSettlement(eventOf(settlement.action === 'retry-in-place' ? 'retry' : settlement.action), true);

  /** Carries the settlement out and reports it; `firstReport`: onError is called (not again on an unblock). */
  async function carryOutSettlement(event: SettledEvent, firstReport: boolean): Promise<SettledEvent> {
    if (duplicate && settlement.action === 'ack') event.duplicate = true;
    const carried = await carryOut(settlement, message, ctx, event);
    // During a rolling deploy every message of a new URN may be released many times: a debug line, not a warning.
    if (settlement.action === 'nack' && unknownUrn === 'release')
      ctx.logger.debug?.(`${settlement.why} on ${ctx.topic}`);
    // A request that ended for good without an answer (dead-lettered, or dropped without a dead-letter topic)
    // replies once with the failure; an attempt that is retried replies nothing.
    const final = (settlement.action === 'dead-letter' && event.written === true) || settlement.action === 'drop';
    if (request && final && outcome.kind === 'failed' && urn !== null) {
      const refused = await sendReply(ctx, request, replyOf(urn, request, errorReply(outcome.error), envelope));
      if (refused !== null)
        ctx.logger.error(`${refused.message} (message ${event.messageId} on ${ctx.topic}: its caller gets no reply)`);
    }
    if (nackCount) {
      // Only a nack for a retry counts: a write that failed is not an attempt of the handler.
      if (settlement.action === 'nack') nackCount.nacked(nackKey);
      else if (event.written !== false) nackCount.settled(nackKey);
    }
    if (settledFrom.kind !== 'gate-rejected' && (outcome.kind === 'failed' || settledFrom.kind === 'poison')) {
      const error =
        outcome.kind === 'failed'
          ? outcome.error
          : new InvalidEnvelopeError(settledFrom.kind === 'poison' ? settledFrom.reason : 'poison message');
      const attempt = countedAttempt(settledFrom.attempts);
      reportFailure(ctx, message, event, settlement, policy.maxAttempts, attempt, error);
    }
    if (firstReport && failure !== null) onError(failure, envelope);
    if (carried.writeFailure) onError(carried.writeFailure, envelope);
    reportDeadLetter(ctx, message, event, settlement);
    const { deadLetter } = carried;
    if (deadLetter) callHookSafely(ctx.logger, 'onDeadLetter', () => ctx.hooks.onDeadLetter?.(deadLetter, message));
    return event;
  }
}

/** A failure's classification by the handler's rule, or the subscription's, or the default one. */
function retriable(settings: Pick<SubscriptionPolicy, 'isRetriable'>, error: unknown): boolean {
  return (settings.isRetriable ?? isRetriableByDefault)(error);
}

/** Writes a delivery's own line to the log, unless a tap (the testing kit) takes it. */
function logOutcome(ctx: ProcessorContext, message: PulsarMessage, level: OutcomeLine['level'], text: string): void {
  const babelMessageId = message.getProperties()[BQ.messageId] ?? '';
  if (ctx.outcomeLines?.take({ level, text, babelMessageId })) return;
  ctx.logger[level](text);
}

/**
 * The one log line of a failed delivery, written once its settlement was carried out. Its stack only with
 * `logStackTraces`: repeated on every attempt (or at another level) it would bury the lines themselves.
 */
function reportFailure(
  ctx: ProcessorContext,
  message: PulsarMessage,
  event: SettledEvent,
  settlement: Settlement | { action: 'block' },
  maxAttempts: number,
  attempt: number,
  error: unknown,
): void {
  const outcome: FailureOutcome =
    settlement.action === 'block'
      ? { kind: 'blocked' }
      : failureOutcomeOf(settlement, event.written, attempt, maxAttempts);
  const line = failureLine({
    urn: event.urn,
    messageId: event.messageId,
    topic: ctx.topic,
    attempt,
    maxAttempts,
    error,
    outcome,
  });
  const stack = error instanceof Error ? error.stack : undefined;
  // A stack trace repeats the error's message, which may carry message data: indented, controls escaped.
  logOutcome(
    ctx,
    message,
    failureLevel(outcome),
    stack !== undefined && ctx.logStackTraces ? indentedBlock(`${line}\n${stack}`) : line,
  );
}

/** The line of a record written to the dead-letter topic, after the failure line that explains it. */
function reportDeadLetter(
  ctx: ProcessorContext,
  message: PulsarMessage,
  event: SettledEvent,
  settlement: Settlement,
): void {
  if (settlement.action !== 'dead-letter' || event.deadLetterTopic === undefined) return;
  logOutcome(
    ctx,
    message,
    'warn',
    deadLetterLine({
      urn: event.urn,
      messageId: event.messageId,
      topic: ctx.topic,
      deadLetterTopic: event.deadLetterTopic,
      reason: settlement.reason,
      attempt: settlement.attempt,
    }),
  );
}

/**
 * A URN without a handler here, as its subscription's strategy says: `fail` is the contract's path (the
 * `onUnknownUrn` hook when set, else a failure that is retried), the others are the subscription's explicit
 * choice and do not call the hook.
 */
async function settleUnknownUrn(
  strategy: UnknownUrnStrategy,
  urn: string,
  envelope: Envelope,
  message: PulsarMessage,
  ctx: ProcessorContext,
): Promise<Outcome> {
  switch (strategy) {
    case 'delete':
    case 'release':
      return { kind: 'set-aside', strategy };
    case 'dead_letter':
      return { kind: 'failed', reason: 'unknown_urn', error: new UnknownUrnError(urn), retriable: false };
    case 'fail':
      if (!ctx.hooks.onUnknownUrn) return { kind: 'failed', reason: 'unknown_urn', error: new UnknownUrnError(urn) };
      try {
        await ctx.hooks.onUnknownUrn(envelope, message);
        return { kind: 'handled' };
      } catch (error) {
        return { kind: 'failed', reason: 'unknown_urn', error };
      }
  }
}

async function runHandler(
  handler: ResolvedHandler,
  urn: string,
  envelope: Envelope,
  message: PulsarMessage,
  ctx: ProcessorContext,
  requests: SettleRequests,
): Promise<Outcome> {
  try {
    const { timeoutMs } = handler;
    // The result is kept only when the handler ended in time: a late handler's value answers nothing.
    let result: unknown;
    await withHandlerTimeout(
      handler.run(envelope, message, requests).then((value) => {
        result = value;
      }),
      urn,
      timeoutMs,
      (stillRunning) => ctx.onHandlerOverdue?.(urn, timeoutMs, stillRunning),
      ctx.deadlines,
    );
    return { kind: 'handled', result };
  } catch (error) {
    return { kind: 'failed', reason: 'failed', error };
  }
}
