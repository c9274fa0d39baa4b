import { checkRetryPolicy, type BabelQueueHooks, type ConsumerLogger, type RetryPolicy } from '../consumer/index.js';
import type { IdempotencyOptions } from '../idempotency/store.js';
import type { FieldCipher } from '../schema/gdpr.js';
import { resolveTelemetry, type ResolvedTelemetry, type TelemetryOption } from '../otel/telemetry-options.js';
import type { PulsarClientLike, PulsarProducer, SubscriptionType } from '../pulsar/client-types.js';
import { describeValue } from '../describe-value.js';
import { checkRetriableRule, type RetriableRule } from './retriable-rule.js';

/** Where retry and dead-letter producers come from when someone else owns them (the module does). */
export interface ProducerSource {
  /** A ready producer on `topic`; the source creates, caches and closes it, never the server. */
  producerFor(topic: string): Promise<PulsarProducer>;
}

export interface BabelPulsarServerOptions extends BabelQueueHooks {
  /**
   * The registration this server serves: it runs only the handlers declared `@BabelHandler(urn, { connection })`
   * with this name (undefined: those without a connection). The module sets it from `forRoot({ name })`.
   */
  name?: string;
  /** Every handler skips a message whose `meta.id` was already handled (docs/contract.md#idempotency); see also @Idempotent. */
  idempotency?: IdempotencyOptions;
  /** Decrypts the `x-gdpr-sensitive` fields of handlers' schemas before they run (docs/schemas.md). */
  cipher?: FieldCipher;
  /** A native `pulsar-client` Client or a PulsarWebSocketClient. The server never closes it. */
  client: PulsarClientLike;
  /** One consumer per topic; short (`orders`) or full (`persistent://public/default/orders`) names. */
  topics: string | string[];
  /** Default `babelqueue`. */
  subscription?: string;
  /** Default `Shared`. */
  subscriptionType?: SubscriptionType;
  /** Where a new subscription starts: `Latest` (Pulsar's default) or `Earliest` (also the existing backlog). */
  subscriptionInitialPosition?: 'Latest' | 'Earliest';
  /** Total deliveries per message, the first included. Default 3; 1 means no retry. */
  maxAttempts?: number;
  /**
   * How a failed message is retried: `'republish'` (default; the server re-publishes a copy to the
   * topic with its own producer), a producer of yours (used as is, never closed by the server), or
   * `'nack'` (negative acknowledgement; Shared and KeyShared subscriptions only).
   */
  retry?: 'republish' | 'nack' | PulsarProducer;
  /**
   * Spacing of retries by re-publish: the retry copy carries a delivery time (and `bq-delay`), so the broker
   * holds it back. Default: none, a retry is due at once. Pulsar honours delivery times on Shared and KeyShared
   * subscriptions only, so other types (and `retry: 'nack'`, whose spacing is nackRedeliverTimeoutMs) are
   * refused. Per handler: `@BabelHandler(urn, { retryPolicy })`.
   */
  retryPolicy?: RetryPolicy;
  /**
   * Where exhausted and poison messages go: `true` (default) = `<topic>.dlq`, a topic name, a producer
   * of yours (never closed by the server), or `false` (exhausted messages are acknowledged and dropped).
   */
  deadLetter?: boolean | string | PulsarProducer;
  /** Messages handled at once per topic. Default 1. */
  concurrency?: number;
  /** Passed to the consumer: how many unacknowledged messages it may hold. */
  receiverQueueSize?: number;
  /** Delay before a negatively acknowledged message comes back (client option nAckRedeliverTimeoutMs). */
  nackRedeliverTimeoutMs?: number;
  /** How long close() waits for in-flight handlers before closing the consumers. Default 10000. */
  shutdownTimeoutMs?: number;
  /** How long one receive call waits before checking for shutdown. Default 500. */
  receiveTimeoutMs?: number;
  /**
   * How long a handler may run before it counts as a failed attempt (its message is retried or dead-lettered
   * and its slot freed; the handler itself keeps running and is reported as overdue). Default 60000; 0 = no
   * limit. `@BabelHandler(urn, { timeoutMs })` overrides it per handler.
   */
  handlerTimeoutMs?: number;
  /**
   * Each failed delivery is logged on one line (URN, id, attempt, outcome, error); its stack trace goes to the
   * debug level. `true` puts the stack on that line instead. Default false.
   */
  logStackTraces?: boolean;
  /** Supplies retry/dead-letter producers instead of the server creating them (used by the module). */
  producers?: ProducerSource;
  /** Defaults to a Nest Logger named BabelPulsarServer. */
  logger?: ConsumerLogger;
  /**
   * OpenTelemetry, when `@opentelemetry/api` is installed: `process <urn>` spans (`tracing`) and consumer metrics
   * (`metrics`), both on by default. `false` or `{ tracing: false }` / `{ metrics: false }` turns them off.
   */
  telemetry?: TelemetryOption;
  /**
   * `false`: no start-up warnings about the wiring (a pattern of `@EventPattern` / `@MessagePattern` on this
   * server, a topic consumed through several subscriptions). The module passes its `startupWarnings` option.
   */
  startupWarnings?: boolean;
  /**
   * `'required'` (default): listen() fails when the broker does not answer. `'optional'`: the app starts anyway,
   * the server reports `disconnected` (health down) and subscribes once the broker answers, logging one line
   * when it starts waiting and one when it is connected.
   */
  brokerAtStart?: 'required' | 'optional';
  /**
   * Which failures are worth a retry, asked after a handler's own `isRetriable` and before the built-in rule
   * (BabelNonRetriableError, 4xx HttpException and guard denials are not): `true` retries, `false` dead-letters at
   * once, `undefined` leaves it to the built-in rule (docs/pulsar-features.md#your-own-retriable-rule).
   */
  isRetriable?: RetriableRule;
}

export interface ResolvedServerOptions {
  topics: string[];
  subscription: string;
  subscriptionType: SubscriptionType;
  maxAttempts: number;
  concurrency: number;
  shutdownTimeoutMs: number;
  receiveTimeoutMs: number;
  handlerTimeoutMs: number;
  logStackTraces: boolean;
  retryPolicy?: RetryPolicy;
  telemetry: ResolvedTelemetry;
  brokerAtStart: 'required' | 'optional';
}

const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = ['Exclusive', 'Shared', 'KeyShared', 'Failover'];
const NACK_SAFE: readonly SubscriptionType[] = ['Shared', 'KeyShared'];

const isProducer = (value: unknown): value is PulsarProducer =>
  typeof value === 'object' && value !== null && typeof (value as PulsarProducer).send === 'function';

function positiveInteger(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer >= ${min}, got ${describeValue(value)}`);
  }
  return value;
}

/** Validates server options at construction, with errors naming the option and what is allowed. */
export function resolveServerOptions(options: BabelPulsarServerOptions): ResolvedServerOptions {
  if (!options || typeof options !== 'object') throw new TypeError('BabelPulsarServer needs an options object');
  const client = options.client as Partial<PulsarClientLike> | undefined;
  if (!client || typeof client.subscribe !== 'function' || typeof client.createProducer !== 'function') {
    throw new TypeError('options.client must be a Pulsar client (pulsar-client Client or PulsarWebSocketClient)');
  }
  const topics = (Array.isArray(options.topics) ? options.topics : [options.topics]).map((t) =>
    typeof t === 'string' ? t.trim() : '',
  );
  if (topics.length === 0 || topics.some((t) => t === '')) {
    throw new TypeError('options.topics must be one or more non-blank topic names');
  }
  if (new Set(topics).size !== topics.length)
    throw new TypeError(`options.topics lists a topic twice: ${topics.join(', ')}`);

  const subscriptionType = options.subscriptionType ?? 'Shared';
  if (!SUBSCRIPTION_TYPES.includes(subscriptionType)) {
    throw new TypeError(
      `options.subscriptionType must be one of ${SUBSCRIPTION_TYPES.join(', ')}, got ${describeValue(subscriptionType)}`,
    );
  }
  const maxAttempts = positiveInteger('options.maxAttempts', options.maxAttempts, 3);

  const retry = options.retry ?? 'republish';
  if (retry === 'nack') {
    if (!NACK_SAFE.includes(subscriptionType)) {
      // Pulsar counts redeliveries only on Shared and KeyShared, so elsewhere the cap would never hold.
      throw new TypeError(
        `options.retry 'nack' needs a Shared or KeyShared subscription (got ${subscriptionType}); use 'republish' instead`,
      );
    }
  } else if (retry !== 'republish' && !isProducer(retry)) {
    throw new TypeError(`options.retry must be 'republish', 'nack' or a producer, got ${describeValue(retry)}`);
  }
  if (isProducer(retry) && topics.length > 1) {
    throw new TypeError(
      'options.retry as a single producer needs exactly one topic: a retry goes back to its own topic',
    );
  }
  const retryPolicy = checkRetryPolicy(options.retryPolicy, 'options.retryPolicy');
  if (retryPolicy) checkDelayable(retry === 'nack', subscriptionType, 'options.retryPolicy');
  const deadLetter = options.deadLetter ?? true;
  if (
    typeof deadLetter === 'string'
      ? deadLetter.trim() === ''
      : typeof deadLetter !== 'boolean' && !isProducer(deadLetter)
  ) {
    throw new TypeError('options.deadLetter must be true, false, a non-blank topic name or a producer');
  }
  const subscription = options.subscription ?? 'babelqueue';
  if (typeof subscription !== 'string' || subscription.trim() === '') {
    throw new TypeError('options.subscription must be a non-blank string');
  }
  if (
    options.subscriptionInitialPosition !== undefined &&
    !['Latest', 'Earliest'].includes(options.subscriptionInitialPosition)
  ) {
    throw new TypeError(
      `options.subscriptionInitialPosition must be 'Latest' or 'Earliest', got ${describeValue(options.subscriptionInitialPosition)}`,
    );
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name.trim() === '')) {
    throw new TypeError(`options.name must be a non-blank string, got ${describeValue(options.name)}`);
  }
  positiveInteger('options.nackRedeliverTimeoutMs', options.nackRedeliverTimeoutMs, 0, 0);
  for (const hook of ['onError', 'onUnknownUrn', 'onRoutingMismatch', 'onDeadLetter'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function')
      throw new TypeError(`options.${hook} must be a function`);
  }
  const telemetry = resolveTelemetry(options.telemetry, 'options.telemetry');
  checkRetriableRule(options.isRetriable, 'options.isRetriable');
  if (options.logStackTraces !== undefined && typeof options.logStackTraces !== 'boolean')
    throw new TypeError(`options.logStackTraces must be true or false, got ${String(options.logStackTraces)}`);
  const brokerAtStart = options.brokerAtStart ?? 'required';
  if (brokerAtStart !== 'required' && brokerAtStart !== 'optional') {
    throw new TypeError(`options.brokerAtStart must be 'required' or 'optional', got ${describeValue(brokerAtStart)}`);
  }
  return {
    brokerAtStart,
    topics,
    subscription,
    subscriptionType,
    maxAttempts,
    concurrency: positiveInteger('options.concurrency', options.concurrency, 1),
    shutdownTimeoutMs: positiveInteger('options.shutdownTimeoutMs', options.shutdownTimeoutMs, 10_000, 0),
    receiveTimeoutMs: positiveInteger('options.receiveTimeoutMs', options.receiveTimeoutMs, 500),
    handlerTimeoutMs: positiveInteger('options.handlerTimeoutMs', options.handlerTimeoutMs, 60_000, 0),
    logStackTraces: options.logStackTraces ?? false,
    ...(retryPolicy && { retryPolicy }),
    telemetry,
  };
}

/** A retry delay needs a re-published copy and a subscription type on which Pulsar honours delivery times. */
export function checkDelayable(retryByNack: boolean, subscriptionType: SubscriptionType, where: string): void {
  if (retryByNack) {
    throw new TypeError(
      `${where} needs retry 'republish' (a negative acknowledgement cannot carry a delay; use nackRedeliverTimeoutMs)`,
    );
  }
  if (!NACK_SAFE.includes(subscriptionType)) {
    // The broker would deliver the copy at once: the configured spacing would silently not happen.
    throw new TypeError(
      `${where} needs a Shared or KeyShared subscription (got ${subscriptionType}): Pulsar honours delivery times only there`,
    );
  }
}

export { isProducer };
