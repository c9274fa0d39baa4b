import {
  BabelNonRetriableError,
  InvalidEnvelopeError,
  SchemaVersionRejectedError,
  UnknownUrnError,
} from '../envelope/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarConsumer, PulsarMessage, PulsarProducer, PulsarProducerMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import { BQ } from '../pulsar/binding.js';
import type { InboundMessage, OutboundCopy, Outcome, Settlement, SettlementPolicy } from './decision-types.js';
import { asError, callHookSafely, type BabelQueueHooks, type ConsumerLogger, type DeadLetterWrite } from './hooks.js';
import { withHandlerTimeout, type HandlerDeadlines } from './handler-timeout.js';
import { inspect } from './inspect.js';
import type { NackCount } from './nack-count.js';
import { bareRecord, bodyOmittedRecord, isTooBig } from './oversize.js';
import { deadLetterLine, failureLevel, failureLine, failureOutcomeOf, unreachable } from './diagnostics.js';
import type { OutcomeLine, OutcomeLineTaps } from './outcome-lines.js';
import type { RetryPolicy } from './retry-delay.js';
import { countedAttempt, decideSettlement } from './settle.js';
import { outcomeOfRequest, RequestedSettlement, SettleRequests } from './settle-request.js';
import { escapeControls, indentedBlock, quoted } from '../text/untrusted-text.js';
import {
  errorReply,
  replyMessage,
  replyRequestOf,
  type ReplyBody,
  type ReplyRequest,
} from '../pulsar/reply-binding.js';

/**
 * Runs the handler for a URN; rejects when the handler fails, else resolves to what it returned (the reply to a
 * request). `requests` takes what the handler asks for (`ctx.retry()`, `ctx.deadLetter()`): it decides the
 * settlement however the handler ends.
 */
export type Dispatcher = (
  urn: string,
  envelope: Envelope,
  message: PulsarMessage,
  requests: SettleRequests,
) => Promise<unknown>;

/** Publishes a reply to a request on the reply topic the request names. */
export type ReplySender = (topic: string, message: PulsarProducerMessage) => Promise<void>;

export interface ProcessorContext {
  topic: string;
  consumer: PulsarConsumer;
  retryProducer: PulsarProducer | null;
  deadLetterProducer: PulsarProducer | null;
  policy: Omit<SettlementPolicy, 'now' | 'deadLetter' | 'retryBy' | 'jitterSample'>;
  /** A handler's own `maxAttempts` / `retryPolicy`, which win over `policy` for its URN. */
  handlerPolicy?: (urn: string) => HandlerPolicy | undefined;
  /** Whether a failure of the URN's handler may be retried; default: anything but a BabelNonRetriableError. */
  isRetriable?: (error: unknown, urn: string) => boolean;
  /** Why `ctx.retry({ delayMs })` cannot be honoured on this consumer (see delayedRetryRefusal); absent = it can. */
  delayedRetryRefusal?: string | null;
  /** Draws the jitter sample in [0, 1); default Math.random. */
  random?: () => number;
  hasHandler(urn: string): boolean;
  dispatch: Dispatcher;
  hooks: BabelQueueHooks;
  logger: ConsumerLogger;
  now?: () => number;
  /** Time-out of the URN's handler, ms; 0 or absent = none. */
  handlerTimeoutMs?: (urn: string) => number;
  /** The consumer's handler time-outs (one timer per time-out length); without it, a timer per message. */
  deadlines?: HandlerDeadlines;
  /** A failure's stack on its log line; otherwise the line alone (the stack is not logged). */
  logStackTraces?: boolean;
  /** May take a delivery's failure and dead-letter lines instead of the log (the testing kit). */
  outcomeLines?: OutcomeLineTaps;
  /** A handler passed its time-out and still runs; `stillRunning` settles when it finally ends. */
  onHandlerOverdue?: (urn: string, timeoutMs: number, stillRunning: Promise<void>) => void;
  /** True the first time `key` is reported (bounded memory); repeats are logged at debug level. */
  firstReport?: (key: string) => boolean;
  /** Sends the replies of requests (docs/contract.md#requests-and-replies); absent = requests get no reply. */
  reply?: ReplySender;
  /** With retry by nack: the consumer's own count of each message's deliveries (see NackCount). */
  nackCount?: NackCount;
}

/** Per-handler settlement settings (from `@BabelHandler(urn, { maxAttempts, retryPolicy })`). */
export interface HandlerPolicy {
  maxAttempts?: number;
  retryPolicy?: RetryPolicy;
}

/** The default classification: only an explicit BabelNonRetriableError skips the retries. */
export function isRetriableByDefault(error: unknown): boolean {
  return !(error instanceof BabelNonRetriableError);
}

/** What happened to one delivery; emitted as the server's `settled` event. */
export interface SettledEvent {
  topic: string;
  messageId: string;
  urn: string | null;
  action: Settlement['action'] | 'ack-failed';
  reason?: string;
  attempt?: number;
  /** False when writing the replacement failed and the original was negatively acknowledged instead. */
  written?: boolean;
  /** Where the dead-letter record was written. */
  deadLetterTopic?: string;
  /** The dead-letter record was too big and was written without the original body. */
  bodyOmitted?: boolean;
}

/**
 * The thin I/O layer around the pure decision functions: inspect, run the handler, decide, then
 * write the replacement (retry copy or dead-letter record) before acknowledging the original.
 */
export async function processMessage(message: PulsarMessage, ctx: ProcessorContext): Promise<SettledEvent> {
  const nackCount = ctx.retryProducer === null ? ctx.nackCount : undefined;
  // Only the nack mode's own count needs the id of every delivery (the id is a call into the native addon).
  const nackKey = nackCount ? messageIdText(message.getMessageId()) : '';
  const inbound: InboundMessage = {
    payload: message.getData(),
    properties: message.getProperties(),
    // The broker's count starts again after a restart or an unload; the consumer's own one does not.
    redeliveryCount: Math.max(message.getRedeliveryCount(), nackCount?.before(nackKey) ?? 0),
    topic: ctx.topic,
  };
  const inspection = inspect(inbound);
  let settledFrom = inspection;
  const onError = (error: Error, envelope: Envelope | Record<string, never>) =>
    callHookSafely(ctx.logger, 'onError', () => ctx.hooks.onError?.(error, envelope, message));

  let outcome: Outcome = { kind: 'handled' };
  let urn: string | null = null;
  let envelope: Envelope | Record<string, never> = {};
  /** The failure onError reports, called after the failure's log line so that a hook's own lines follow it. */
  let failure: Error | null = null;
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
    outcome = await runHandler(inspection.urn, inspection.envelope, message, ctx, requests);
    const requested = requests.settle();
    if (requested !== null) {
      // The handler's first word decides, whatever it did afterwards (docs/pulsar-features.md#settling-from-the-handler).
      if (outcome.kind === 'failed' && !(outcome.error instanceof RequestedSettlement))
        ctx.logger.warn(
          `handler for ${quoted(inspection.urn)} on ${ctx.topic} failed after asking for ${requested.kind === 'retry' ? 'a retry' : 'a dead letter'}: ` +
            `settled as asked; the failure was ${quoted(asError(outcome.error).message)}`,
        );
      outcome = outcomeOfRequest(requested);
    } else if (outcome.kind === 'failed' && !(ctx.isRetriable ?? isRetriableByDefault)(outcome.error, inspection.urn)) {
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

  const own = urn === null ? undefined : ctx.handlerPolicy?.(urn);
  // Spelled out, not spread: V8 (Node 20) gives an optimized `{ ...source, more }` a new hidden class on every
  // call, which costs a map allocation and a transition search per message.
  const policy: SettlementPolicy = {
    maxAttempts: own?.maxAttempts ?? ctx.policy.maxAttempts,
    retryBy: ctx.retryProducer ? 'republish' : 'nack',
    deadLetter: ctx.deadLetterProducer !== null,
    now: ctx.now?.() ?? Date.now(),
    jitterSample: (ctx.random ?? Math.random)(),
  };
  const retryPolicy = own?.retryPolicy ?? ctx.policy.retryPolicy;
  if (retryPolicy !== undefined) policy.retryPolicy = retryPolicy;
  const settlement = decideSettlement(inbound, settledFrom, outcome, policy);
  const event = settledEvent(ctx.topic, message, urn, settlement.action);
  const carried = await carryOut(settlement, message, ctx, event);
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
    reportFailure(ctx, message, event, settlement, policy.maxAttempts, countedAttempt(settledFrom.attempts), error);
  }
  if (failure !== null) onError(failure, envelope);
  if (carried.writeFailure) onError(carried.writeFailure, envelope);
  reportDeadLetter(ctx, message, event, settlement);
  const { deadLetter } = carried;
  if (deadLetter) callHookSafely(ctx.logger, 'onDeadLetter', () => ctx.hooks.onDeadLetter?.(deadLetter, message));
  return event;
}

/** The reply message, continuing the request's trace. */
function replyOf(
  urn: string,
  request: ReplyRequest,
  body: ReplyBody,
  envelope: Envelope | Record<string, never>,
): PulsarProducerMessage {
  const traceId = (envelope as { trace_id?: unknown }).trace_id;
  return replyMessage(urn, request, body, typeof traceId === 'string' && traceId !== '' ? traceId : undefined);
}

/** Sends a reply; the error that says why when it could not be written, else null. */
async function sendReply(
  ctx: ProcessorContext,
  request: ReplyRequest,
  reply: PulsarProducerMessage,
): Promise<Error | null> {
  try {
    await ctx.reply!(request.to, reply);
    return null;
  } catch (error) {
    return new Error(`could not write the reply to ${request.to}: ${asError(error).message}`, { cause: error });
  }
}

/**
 * The delivery's event, its message id text made on first read: the id is a call into the native addon that
 * builds a new native object, which most deliveries (acknowledged, no `settled` listener) never need. Whoever
 * hands the event on copies it (`{ ...event }`), which reads the id into a plain field.
 */
function settledEvent(
  topic: string,
  message: PulsarMessage,
  urn: string | null,
  action: SettledEvent['action'],
): SettledEvent {
  let source: PulsarMessage | null = message;
  let messageId = '';
  return {
    topic,
    get messageId(): string {
      if (source !== null) {
        messageId = messageIdText(source.getMessageId());
        source = null;
      }
      return messageId;
    },
    set messageId(text: string) {
      messageId = text;
      source = null;
    },
    urn,
    action,
  };
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
  settlement: Settlement,
  maxAttempts: number,
  attempt: number,
  error: unknown,
): void {
  const outcome = failureOutcomeOf(settlement, event.written, attempt, maxAttempts);
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

async function runHandler(
  urn: string,
  envelope: Envelope,
  message: PulsarMessage,
  ctx: ProcessorContext,
  requests: SettleRequests,
): Promise<Outcome> {
  if (!ctx.hasHandler(urn)) {
    if (!ctx.hooks.onUnknownUrn) return { kind: 'failed', reason: 'unknown_urn', error: new UnknownUrnError(urn) };
    try {
      await ctx.hooks.onUnknownUrn(envelope, message);
      return { kind: 'handled' };
    } catch (error) {
      return { kind: 'failed', reason: 'unknown_urn', error };
    }
  }
  try {
    const timeoutMs = ctx.handlerTimeoutMs?.(urn) ?? 0;
    // The result is kept only when the handler ended in time: a late handler's value answers nothing.
    let result: unknown;
    await withHandlerTimeout(
      ctx.dispatch(urn, envelope, message, requests).then((value) => {
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

/** What the hooks hear of a settlement, once its lines are logged. */
interface CarriedOut {
  /** The dead-letter record written (onDeadLetter). */
  deadLetter: DeadLetterWrite | null;
  /** The retry copy or dead-letter record that could not be written (onError). */
  writeFailure: Error | null;
}

const NOTHING_TO_REPORT: CarriedOut = { deadLetter: null, writeFailure: null };

async function carryOut(
  settlement: Settlement,
  message: PulsarMessage,
  ctx: ProcessorContext,
  event: SettledEvent,
): Promise<CarriedOut> {
  switch (settlement.action) {
    case 'ack':
      if (settlement.warning) ctx.logger.warn(escapeControls(settlement.warning));
      await acknowledge(message, ctx, event);
      return NOTHING_TO_REPORT;
    case 'drop':
      // Logged by the failure line (outcome dropped), which carries the same facts.
      await acknowledge(message, ctx, event);
      return NOTHING_TO_REPORT;
    case 'nack':
      event.reason = settlement.why;
      ctx.consumer.negativeAcknowledge(message);
      return NOTHING_TO_REPORT;
    case 'retry':
    case 'dead-letter': {
      const isRetry = settlement.action === 'retry';
      const producer = isRetry ? ctx.retryProducer! : ctx.deadLetterProducer!;
      if (isRetry) event.attempt = settlement.attempt;
      else event.reason = settlement.reason;
      let written: OutboundCopy;
      try {
        // The keys travel with the copy, so it lands on its original's partition and Key_Shared hands it to
        // the consumer that owns the key.
        written = isRetry
          ? await send(producer, settlement.copy, keysOf(message))
          : await writeDeadLetter(producer, settlement, message, ctx, event);
      } catch (error) {
        // Never acknowledge what was not replaced (docs/contract.md#settlement): the broker redelivers it.
        event.written = false;
        const where = isRetry ? 'retry copy to' : 'dead-letter record to';
        const failure = new Error(`could not write the ${where} ${producer.getTopic()}: ${asError(error).message}`, {
          cause: error,
        });
        // A write refused once is usually refused on every redelivery (a missing permission, a full disk):
        // reported at error level once per message and target, repeats at debug.
        const first = ctx.firstReport?.(`${producer.getTopic()} ${event.messageId}`) ?? true;
        const line = `${failure.message} (message ${event.messageId} on ${ctx.topic} was negatively acknowledged and stays on the broker until the write succeeds${first ? '; repeats for this message are logged at debug level' : ''})`;
        if (first) ctx.logger.error(line);
        else ctx.logger.debug?.(line);
        ctx.consumer.negativeAcknowledge(message);
        return { deadLetter: null, writeFailure: failure };
      }
      event.written = true;
      let deadLetter: DeadLetterWrite | null = null;
      if (settlement.action === 'dead-letter') {
        deadLetter = { reason: settlement.reason, topic: producer.getTopic(), ...written };
        event.deadLetterTopic = producer.getTopic();
      }
      await acknowledge(message, ctx, event);
      return { deadLetter, writeFailure: null };
    }
    default:
      return unreachable(settlement);
  }
}

async function send(
  producer: PulsarProducer,
  copy: OutboundCopy,
  keys: Pick<PulsarProducerMessage, 'partitionKey' | 'orderingKey'>,
): Promise<OutboundCopy> {
  // Without a retry policy the copy has no delivery time and is due at once; with one it carries the absolute
  // time (docs/contract.md#delays), honoured by the broker on Shared and Key_Shared subscriptions.
  await producer.send({
    data: copy.data,
    properties: copy.properties,
    ...(copy.deliverAt !== undefined && { deliverAt: copy.deliverAt }),
    ...keys,
  });
  return copy;
}

/**
 * Writes the dead-letter record. A record refused as too big is refused forever, so instead of looping
 * (negative acknowledgement, redelivery, refusal…) it is written without the body, then, if still too big,
 * as a bare record of properties; the original message id and size say where the body is.
 */
async function writeDeadLetter(
  producer: PulsarProducer,
  settlement: Extract<Settlement, { action: 'dead-letter' }>,
  message: PulsarMessage,
  ctx: ProcessorContext,
  event: SettledEvent,
): Promise<OutboundCopy> {
  const keys = keysOf(message);
  try {
    return await send(producer, settlement.record, keys);
  } catch (error) {
    if (!isTooBig(error)) throw error;
  }
  const original = { size: message.getData().length, messageId: messageIdText(message.getMessageId()) };
  const slim = bodyOmittedRecord(settlement.reason, settlement.record, original);
  let written: OutboundCopy;
  try {
    written = await send(producer, slim, keys);
  } catch (error) {
    if (!isTooBig(error)) throw error;
    written = await send(producer, bareRecord(slim), keys);
  }
  event.bodyOmitted = true;
  ctx.logger.warn(
    `dead-letter record for message ${original.messageId} on ${ctx.topic} (${settlement.reason}) was too big to ` +
      `write; written to ${producer.getTopic()} without its body (${original.size} bytes): read the original ` +
      'from the topic by that message id while retention keeps it',
  );
  return written;
}

/** The routing keys of a delivery, for its retry copy or dead-letter record (empty keys are left out). */
function keysOf(message: PulsarMessage): Pick<PulsarProducerMessage, 'partitionKey' | 'orderingKey'> {
  const partitionKey = message.getPartitionKey();
  const orderingKey = message.getOrderingKey?.() ?? '';
  return { ...(partitionKey && { partitionKey }), ...(orderingKey && { orderingKey }) };
}

async function acknowledge(message: PulsarMessage, ctx: ProcessorContext, event: SettledEvent): Promise<void> {
  try {
    await ctx.consumer.acknowledge(message);
  } catch (error) {
    // The broker redelivers an unacknowledged message, so this costs a duplicate, never a loss.
    event.action = 'ack-failed';
    ctx.logger.warn(`acknowledge failed on ${ctx.topic} (the message will be redelivered): ${asError(error).message}`);
  }
}
