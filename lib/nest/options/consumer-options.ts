import type { UnknownUrnStrategy } from '../../consumer/unknown-urn.js';
import { checkLagGauges, type LagGaugeSetting } from './lag-gauge-option.js';
import { checkDispatchRate, type DispatchRateSetting } from './dispatch-rate-option.js';
import { delayedRetryRefusal, honoursDeliveryTimes } from '../../consumer/settle-request.js';
import { describeValue } from '../../describe-value.js';
import type { PulsarProducer, SubscriptionType } from '../../pulsar/client-types.js';
import { checkTopicName } from './topic-option.js';
import { sharedRows } from './shared-rows.js';
import { checkClientOptions, type PulsarClientName, type PulsarConsumerOptions } from '../../pulsar/client-options.js';
import { option, withDefault, type RaiseOptionError, type ResolvedOptions } from '../../options/option-table.js';
import { flag, integer, oneOf } from '../../options/validators.js';
import { checkRetriableRule, type RetriableRule } from './retriable-rule.js';
import {
  checkHandlerSettingsMap,
  type HandlerSettingsMap,
  type ResolvedHandlerSettingsMap,
} from './handler-settings.js';
import type { Ordering } from './ordering-option.js';

export type { Ordering };

/** How a failed message is retried (see `retry`). */
const RETRY_MODES = ['republish', 'retry-topic', 'nack'] as const;
export type RetryMode = (typeof RETRY_MODES)[number];

export const isProducer = (value: unknown): value is PulsarProducer =>
  typeof value === 'object' && value !== null && typeof (value as PulsarProducer).send === 'function';

function noTopicTwice(topics: string[], name: string, raise: RaiseOptionError): string[] {
  if (new Set(topics).size !== topics.length) raise(`${name} lists a topic twice: ${topics.join(', ')}`, 'type');
  return topics;
}

/**
 * How the module's server consumes (`forRoot({ consumer })`); the BabelPulsarServer's own options add producers
 * of the user's to `retry` and `deadLetter` ({@link serverConsumerOptions}).
 */
export const consumerOptions = {
  /**
   * Topics to consume, one consumer each, each with its own retry and dead-letter producer: short (`orders`) or
   * full (`persistent://public/default/orders`) names.
   * @defaultValue `[topic]`
   */
  topics: option<string | string[], string[] | undefined>((value, name, raise) => {
    if (value === undefined) return undefined;
    const list = Array.isArray(value) ? (value as unknown[]) : [value];
    if (list.length === 0) return raise(`${name} must be one or more non-blank topic names`, 'type');
    return noTopicTwice(
      list.map((topic, index) => checkTopicName(topic, `${name}[${index}]`, raise)),
      name,
      raise,
    );
  }),
  /**
   * The subscription name.
   * @defaultValue `babelqueue`
   */
  subscription: withDefault(sharedRows.subscription(), 'babelqueue'),
  /**
   * `Shared`, `KeyShared`, `Exclusive` or `Failover`.
   * @defaultValue `Shared`
   */
  subscriptionType: withDefault(sharedRows.subscriptionType(), 'Shared'),
  /**
   * Where a new subscription starts: `Latest` or `Earliest` (also the backlog already on the topic). The
   * subscription is created when the server starts, after every `onModuleInit`: with `Latest`, a message
   * published before the first start is never seen by a new subscription. An existing subscription always
   * resumes where it stopped.
   * @defaultValue `Latest`
   */
  subscriptionInitialPosition: oneOf(['Latest', 'Earliest']),
  /**
   * Total deliveries of a message, the first included; `1` means no retry.
   * @defaultValue `3`
   */
  maxAttempts: withDefault(sharedRows.maxAttempts(), 3),
  /**
   * `'republish'`: a copy with `bq-attempts` + 1 goes back to the topic, then the original is acknowledged.
   * `'nack'`: negative acknowledgement (Shared and KeyShared only: Pulsar counts redeliveries only there).
   * `'retry-topic'`: the copy goes to the subscription's own retry topic, `<topic>.<subscription>.retry`, which
   * the same subscription consumes beside the topic: the other subscriptions of a fan-out topic never see it.
   * @defaultValue `'republish'`
   */
  retry: oneOf(RETRY_MODES, 'republish'),
  /**
   * Spacing of retries by re-publish on a Shared or KeyShared subscription: the retry copy waits on the broker
   * (`{ backoff: 'exponential' | 'fixed', initialDelayMs, maxDelayMs?, jitter? }`, docs/retries.md). Per
   * handler: `@BabelHandler(urn, { retryPolicy })`.
   * @defaultValue none (a retry is due at once)
   */
  retryPolicy: sharedRows.retryPolicy(),
  /**
   * Where exhausted and poison messages go: `true` = `<topic>.dlq`, a topic name, or `false` (an exhausted
   * message is acknowledged, dropped and logged).
   * @defaultValue `true`
   */
  deadLetter: option<boolean | string, boolean | string>((value, name, raise) => {
    if (value === undefined) return true;
    if (typeof value === 'boolean') return value;
    if (typeof value !== 'string')
      return raise(
        `${name} must be true (<topic>.dlq), false (no dead-lettering) or a topic name, got ${describeValue(value)}`,
        'type',
      );
    return checkTopicName(value, name, raise);
  }),
  /**
   * What a subscription does with a message whose URN has no handler there (docs/retries.md#unknown-urns):
   * `'fail'` (the `onUnknownUrn` hook when set, else retried and dead-lettered with reason `unknown_urn`),
   * `'dead_letter'` (at once), `'delete'` (acknowledged, logged and counted) or `'release'` (negatively acknowledged
   * so another instance of a Shared or KeyShared subscription takes it: for rolling deploys). Per handler's
   * subscription: the `handlers` option.
   * @defaultValue `'fail'`
   */
  unknownUrn: withDefault(sharedRows.unknownUrn(), 'fail'),
  /**
   * With `unknownUrn: 'release'`: deliveries of a message released before it falls back to `'fail'` (counted by
   * the broker's redelivery count), so a URN that no instance knows cannot circle for ever.
   * @defaultValue `10`
   */
  unknownUrnMaxReleases: integer({ min: 1, fallback: 10 }),
  /**
   * A circuit breaker per subscription (docs/retries.md#circuit-breaker): when handler failures reach `failureRatio`
   * of the messages settled within `windowMs` (at least `minimumMessages` of them), the subscription is paused, its
   * messages held without using up their attempts; after `openMs` it resumes to probe, and `probes` successes close
   * it (a failure opens it again). `true` for the defaults `{ failureRatio: 0.5, windowMs: 30000, minimumMessages:
   * 20, openMs: 30000, probes: 3 }`, or some of them over the defaults.
   * @defaultValue `false` (no breaker)
   */
  circuitBreaker: sharedRows.circuitBreaker(),
  /**
   * Handler calls started per second at most, per subscription on this instance (docs/retries.md#rate-limit):
   * evenly spaced (`1000 / maxPerSecond` ms apart), never a second's worth at once. A message waits for its start
   * time before its handler's time-out begins. Any positive number (`0.5`: one every 2 s).
   * @defaultValue none (no limit)
   */
  maxPerSecond: sharedRows.maxPerSecond(),
  /**
   * A rate per subscription across every instance, enforced by the broker (docs/retries.md#across-instances): at
   * start the server sets each of its subscriptions' dispatch-rate policy through the admin API, so the broker
   * delivers the subscription at most `perSecond` messages a second in all, whatever the number of instances (the
   * retry topic's subscription gets its own). `{ perSecond, adminUrl?, token? }`: the admin API is the client's
   * broker with the client's credentials unless `adminUrl` (and `token`) say otherwise. A policy the broker refuses
   * is a start-up warning; the policy stays on the broker after the server stops.
   * @defaultValue none (no admin calls; an existing policy is left as it is)
   */
  dispatchRate: option<DispatchRateSetting>((value, name, raise) => checkDispatchRate(value, name, raise)),
  /**
   * OpenTelemetry gauges of each subscription's lag (docs/operations.md#lag-gauges): `babelqueue.subscription.backlog`,
   * `.oldest_unacked_age`, `.retry_backlog` and `babelqueue.dead_letter.depth`, read from the broker's admin API at
   * most once per topic every `intervalMs`: `{ adminUrl, intervalMs?, token? }`.
   * @defaultValue none (no gauges, no admin calls)
   */
  lagGauges: option<LagGaugeSetting>((value, name, raise) => checkLagGauges(value, name, raise)),
  /**
   * Messages handled at once per topic.
   * @defaultValue `1`
   */
  concurrency: withDefault(sharedRows.concurrency(), 1),
  /**
   * `'key'`: messages of one key (ordering key, else partition key) run one at a time, in the order received, while
   * different keys run in parallel up to `concurrency`; a failed message is retried in place, after its retry delay,
   * before any later message of its key (docs/scale.md#per-key-order). Messages without a key run unordered.
   * Per handler: `@BabelHandler(urn, { ordering })`.
   * @defaultValue `'none'`
   */
  ordering: withDefault(sharedRows.ordering(), 'none'),
  /**
   * With `ordering: 'key'`, a message whose handler failed for good (out of attempts, or not retriable):
   * `'dead-letter'` writes its record and its key goes on; `'block-key'` keeps it unacknowledged and its key waits
   * (other keys go on) until an operator unblocks it (`server.unblock()`, the dashboard, `babelqueue-pulsar
   * unblock`), which dead-letters it then (docs/scale.md#per-key-order). Per handler: `@BabelHandler(urn, {
   * onExhausted })`.
   * @defaultValue `'dead-letter'`
   */
  onExhausted: withDefault(sharedRows.onExhausted(), 'dead-letter'),
  /**
   * Messages the client prefetches beyond those being handled (bounds memory on a large backlog, and what an
   * instance whose handlers are stuck holds back from the other consumers of a Shared subscription).
   * @defaultValue twice `concurrency`, at least 10
   */
  receiverQueueSize: integer({ min: 0 }),
  /**
   * With `retry: 'nack'`: how long before a negatively acknowledged message comes back; also a last attempt the
   * circuit breaker released (docs/retries.md#circuit-breaker).
   * @defaultValue the client's (60000)
   */
  nackRedeliverTimeoutMs: integer({ min: 0 }),
  /**
   * How long shutdown waits for in-flight handlers; what still runs then is left for redelivery.
   * @defaultValue `10000`
   */
  shutdownTimeoutMs: integer({ min: 0, fallback: 10_000 }),
  /**
   * Ignored (kept so that existing configurations still start): consumers wait for their next message without a
   * time-out and stop by closing, since a native receive with a time-out holds one of libuv's pool threads while it
   * waits ([clients.md](clients.md#waiting-without-the-thread-pool)).
   * @deprecated Has no effect; remove it.
   * @defaultValue none
   */
  receiveTimeoutMs: integer({ min: 1 }),
  /**
   * How long a handler may run before its attempt counts as failed (its message is retried or dead-lettered and
   * its slot freed; the handler keeps running and is reported as overdue); `0` = no limit. Per handler:
   * `@BabelHandler(urn, { timeoutMs })`.
   * @defaultValue `60000`
   */
  handlerTimeoutMs: integer({ min: 0, fallback: 60_000 }),
  /**
   * Handlers past their time-out that may still run on one topic: at this many, the consumer takes no new
   * message until one of them ends (status `stalled`, one log line), so a hung dependency cannot pile up work.
   * @defaultValue twice `concurrency`
   */
  maxOverdueHandlers: integer({ min: 1 }),
  /**
   * Each failed delivery is logged on one line, without its stack trace (at no level). `true` puts the stack on
   * that line.
   * @defaultValue `false`
   */
  logStackTraces: flag(false),
  /**
   * Which failures are worth a retry, asked after a handler's own `isRetriable` and before the built-in rule
   * (BabelNonRetriableError, 4xx HttpException and guard denials are not): `true` retries, `false` dead-letters at
   * once, `undefined` leaves it to the built-in rule (docs/pulsar-features.md#your-own-retriable-rule).
   * @defaultValue the built-in rule
   */
  isRetriable: option<RetriableRule>((value, name, raise) => checkRetriableRule(value, name, raise)),
  /**
   * Handler settings from configuration, keyed by URN or `Controller.method`: `{ topic, subscription,
   * subscriptionType, maxAttempts, retryPolicy, concurrency, unknownUrn, ordering, onExhausted, inbox,
   * circuitBreaker, maxPerSecond }` override the handler's `@BabelHandler` values
   * (docs/configuration.md#handler-settings-from-configuration). Start-up logs where each value came from; a key
   * that names no handler fails the start.
   * @defaultValue none
   */
  handlers: option<HandlerSettingsMap, ResolvedHandlerSettingsMap | undefined>((value, name, raise) =>
    checkHandlerSettingsMap(value, name, raise),
  ),
  /**
   * Pulsar consumer settings of every subscription (docs/pulsar-features.md#client-options), e.g. `ackTimeoutMs`,
   * `consumerName`, `keySharedPolicy`; per handler: `@BabelHandler(urn, { consumerOptions })`.
   * @defaultValue none
   */
  consumerOptions: option<PulsarConsumerOptions>((value, name, raise) =>
    value === undefined
      ? undefined
      : checkClientOptions<PulsarConsumerOptions>('consumer', value, name, undefined, raise),
  ),
};

/** The BabelPulsarServer's consumer options: the module's, plus producers of the user's for retries and dead letters. */
export const serverConsumerOptions = {
  ...consumerOptions,
  /**
   * One consumer per topic; short (`orders`) or full (`persistent://public/default/orders`) names. Required.
   */
  topics: option<string | string[], string[]>((value, name, raise) => {
    const list = (Array.isArray(value) ? (value as unknown[]) : [value]).map((topic) =>
      typeof topic === 'string' ? topic.trim() : '',
    );
    if (list.length === 0 || list.includes(''))
      return raise(`${name} must be one or more non-blank topic names`, 'type');
    return noTopicTwice(list, name, raise);
  }),
  /**
   * How a failed message is retried: `'republish'` (a copy goes back to the topic through the server's own
   * producer), `'retry-topic'` (a copy goes to the subscription's own `<topic>.<subscription>.retry`, consumed by
   * the same subscription), a producer of yours (used as is, never closed by the server), or `'nack'` (negative
   * acknowledgement; Shared and KeyShared subscriptions only).
   * @defaultValue `'republish'`
   */
  retry: option<RetryMode | PulsarProducer, RetryMode | PulsarProducer>((value, name, raise) => {
    if (value === undefined) return 'republish';
    if ((RETRY_MODES as readonly unknown[]).includes(value) || isProducer(value)) return value as RetryMode;
    return raise(
      `${name} must be 'republish', 'retry-topic', 'nack' or a producer, got ${describeValue(value)}`,
      'type',
    );
  }),
  /**
   * Where exhausted and poison messages go: `true` = `<topic>.dlq`, a topic name, a producer of yours (never
   * closed by the server), or `false` (exhausted messages are acknowledged and dropped).
   * @defaultValue `true`
   */
  deadLetter: option<boolean | string | PulsarProducer, boolean | string | PulsarProducer>((value, name, raise) => {
    if (value === undefined) return true;
    if (typeof value === 'boolean' || isProducer(value)) return value;
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    return raise(`${name} must be true, false, a non-blank topic name or a producer`, 'type');
  }),
};

export type ResolvedConsumerOptions = ResolvedOptions<typeof serverConsumerOptions>;

/** The rules between consumer options, checked once each option is valid on its own. */
export function checkConsumerCombination(
  settings: Pick<ResolvedConsumerOptions, 'retry' | 'retryPolicy' | 'subscriptionType'> & {
    ordering?: Ordering;
    topics?: string[];
    unknownUrn?: UnknownUrnStrategy;
  },
  prefix: string,
  raise: RaiseOptionError,
): void {
  const { retry, subscriptionType, retryPolicy, topics, unknownUrn, ordering } = settings;
  if (unknownUrn === 'release') checkReleasable(subscriptionType, `${prefix}.unknownUrn 'release'`, raise);
  if (retry === 'nack' && !honoursDeliveryTimes(subscriptionType)) {
    // Pulsar counts redeliveries only on Shared and KeyShared, so elsewhere the cap would never hold.
    raise(
      `${prefix}.retry 'nack' needs a Shared or KeyShared subscription (got ${subscriptionType}); use 'republish' instead`,
      'type',
    );
  }
  if (isProducer(retry) && topics !== undefined && topics.length > 1)
    raise(`${prefix}.retry as a single producer needs exactly one topic: a retry goes back to its own topic`, 'type');
  // Retries in place wait in this process, so their delays hold on every subscription type.
  if (retryPolicy && ordering !== 'key')
    checkDelayable(retry === 'nack', subscriptionType, `${prefix}.retryPolicy`, raise);
}

/**
 * A release needs another consumer to take the message and a redelivery count to bound it: on Exclusive and
 * Failover there is one active consumer and Pulsar counts no redeliveries.
 */
export function checkReleasable(subscriptionType: SubscriptionType, where: string, raise: RaiseOptionError): void {
  if (!honoursDeliveryTimes(subscriptionType))
    raise(`${where} needs a Shared or KeyShared subscription (got ${subscriptionType})`, 'type');
}

/** A retry delay where it can be honoured (see delayedRetryRefusal), else an error naming `where`. */
export function checkDelayable(
  retryByNack: boolean,
  subscriptionType: SubscriptionType,
  where: string,
  raise: RaiseOptionError,
): void {
  const refusal = delayedRetryRefusal(retryByNack, subscriptionType);
  if (refusal !== null) raise(`${where} ${refusal}`, 'type');
}

/** The consumer settings checked against the client they will run on, when it is known (a setting it lacks fails). */
export function checkConsumerOptionsFor(
  consumerOptions: PulsarConsumerOptions | undefined,
  client: PulsarClientName | undefined,
  name: string,
  raise: RaiseOptionError,
): PulsarConsumerOptions | undefined {
  return consumerOptions === undefined || client === undefined
    ? consumerOptions
    : checkClientOptions<PulsarConsumerOptions>('consumer', consumerOptions, name, client, raise);
}
