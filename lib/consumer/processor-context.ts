// What the settlement of one delivery works with (the consumer's context) and what it reports (the settled event).
import { BabelNonRetriableError } from '../envelope/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarConsumer, PulsarMessage, PulsarProducer, PulsarProducerMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import type { Settlement } from './decision-types.js';
import type { BabelQueueHooks, ConsumerLogger } from './hooks.js';
import type { HandlerDeadlines } from './handler-timeout.js';
import type { NackCount } from './nack-count.js';
import type { OutcomeLineTaps } from './outcome-lines.js';
import type { RetryPolicy } from './retry-delay.js';
import type { SettleRequests } from './settle-request.js';
import type { UnknownUrnPolicy, UnknownUrnStrategy } from './unknown-urn.js';

/** Publishes a reply to a request on the reply topic the request names. */
export type ReplySender = (topic: string, message: PulsarProducerMessage) => Promise<void>;

/**
 * One URN's handler as a subscription runs it, resolved once at start: the call and everything the settlement of
 * its messages needs, its own settings already merged over the server's.
 */
export interface ResolvedHandler {
  /**
   * Runs the handler; rejects when it fails, else resolves to what it returned (the reply to a request).
   * `requests` takes what the handler asks for (`ctx.retry()`, `ctx.deadLetter()`): it decides the settlement
   * however the handler ends.
   */
  run(envelope: Envelope, message: PulsarMessage, requests: SettleRequests): Promise<unknown>;
  /** ms; 0 = none. */
  timeoutMs: number;
  maxAttempts: number;
  retryPolicy?: RetryPolicy;
  /** Whether a failure may be retried (default rule: anything but a BabelNonRetriableError). */
  isRetriable(error: unknown): boolean;
}

/**
 * The one answer a subscription gives about a message's URN: its handler here; `sibling` when another subscription
 * of the same topic handles it (that one runs it, this one acknowledges it); null when nobody here does (the
 * subscription's unknown-URN strategy applies).
 */
export type Resolution = ResolvedHandler | 'sibling' | null;

/** The settlement settings of a message no handler here runs (a poison message, an unknown URN). */
export interface SubscriptionPolicy {
  maxAttempts: number;
  retryPolicy?: RetryPolicy;
  /** Default: anything but a BabelNonRetriableError. */
  isRetriable?: (error: unknown) => boolean;
}

export interface ProcessorContext {
  topic: string;
  consumer: PulsarConsumer;
  retryProducer: PulsarProducer | null;
  deadLetterProducer: PulsarProducer | null;
  policy: SubscriptionPolicy;
  /** Answers once per message which handler runs it (see Resolution). */
  resolve(urn: string): Resolution;
  /** Why `ctx.retry({ delayMs })` cannot be honoured on this consumer (see delayedRetryRefusal); absent = it can. */
  delayedRetryRefusal?: string | null;
  /** Draws the jitter sample in [0, 1); default Math.random. */
  random?: () => number;
  hooks: BabelQueueHooks;
  logger: ConsumerLogger;
  now?: () => number;
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
  /**
   * Retries are made in place (`ordering: 'key'`): a failed message with attempts left is not replaced but settled
   * as a `retry` with `inPlace`, and its consumer runs it again (see TopicConsumer).
   */
  retryInPlace?: boolean;
  /**
   * With `retryInPlace`: a message of a key whose handler failed for good is not dead-lettered but kept, its key
   * blocked, until its consumer unblocks it (`onExhausted: 'block-key'`, see BlockedKeys).
   */
  blockExhausted?: boolean;
  /** With retry by nack: the consumer's own count of each message's deliveries (see NackCount). */
  nackCount?: NackCount;
  /** What the subscription does with a URN it has no handler for; absent = `fail` (lib/consumer/unknown-urn.ts). */
  unknownUrn?: UnknownUrnPolicy;
  /**
   * Resolves when the next handler call may start (the subscription's `maxPerSecond`); null or absent = at once.
   * Waited for before the handler's time-out starts.
   */
  pace?: (() => Promise<void>) | null;
  /** True while the subscription's circuit breaker is open or probing (see SettlementPolicy.holdLastAttempt). */
  holdLastAttempts?: () => boolean;
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
  /**
   * A retry in place (`ordering: 'key'`) is a `retry` with `inPlace` set. `block`: failed for good under
   * `onExhausted: 'block-key'`; the message stays unacknowledged and its key waits until it is unblocked, which
   * settles it as usual (a second event then).
   */
  action: Exclude<Settlement['action'], 'retry-in-place'> | 'ack-failed' | 'block';
  reason?: string;
  attempt?: number;
  /** Retried in place: the message stays unacknowledged and runs again in its key's lane after `retryDelayMs`. */
  inPlace?: boolean;
  /** With `inPlace`: how long the message waits before it runs again, ms. */
  retryDelayMs?: number;
  /** False when writing the replacement failed and the original was negatively acknowledged instead. */
  written?: boolean;
  /** Where the dead-letter record was written. */
  deadLetterTopic?: string;
  /** The dead-letter record was too big and was written without the original body. */
  bodyOmitted?: boolean;
  /** The URN had no handler here: the strategy applied to this delivery (a `release` past its bound says `fail`). */
  unknownUrn?: UnknownUrnStrategy;
  /** The failure was not worth a retry (a BabelNonRetriableError, a dead letter the handler asked for). */
  nonRetriable?: boolean;
  /** Acknowledged without running the handler: its `meta.id` was handled before (idempotency, inbox). */
  duplicate?: boolean;
}

/**
 * The delivery's event, its message id text made on first read: the id is a call into the native addon that
 * builds a new native object, which most deliveries (acknowledged, no `settled` listener) never need. Whoever
 * hands the event on copies it (`{ ...event }`), which reads the id into a plain field.
 */
export function settledEvent(
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
