import type { IdempotencyOptions } from '../../idempotency/store.js';
import { option, type RaiseOptionError } from '../../options/option-table.js';
import { passThrough } from '../../options/validators.js';
import type { PayloadSchema } from '../../schema/payload-schema.js';
import { checkBatchOptions, type BatchOptions, type ResolvedBatchOptions } from '../../consumer/batch-collector.js';
import { parseTopicPattern, type TopicPattern } from '../../pulsar/topic-pattern.js';
import { consumerOptions } from './consumer-options.js';
import { sharedRows } from './shared-rows.js';

function optionalName(value: unknown, name: string, example: string, raise: RaiseOptionError): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    return raise(`${name} must be a non-blank string such as ${example}, got ${String(value)}`, 'type');
  return value.trim();
}

/** Every option of `@BabelHandler(urn, options)`, each declared once. */
export const handlerOptionTable = {
  /** Free-form metadata kept with the handler (Nest's pattern extras), e.g. for documentation tooling. */
  extras: passThrough<Record<string, unknown>>(),
  /**
   * How long this handler may run before the attempt counts as failed, ms; `0` = no limit.
   * @defaultValue the server's `handlerTimeoutMs`
   */
  timeoutMs: option<number>((value, name, raise) => {
    if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value >= 0))
      return raise(`${name} must be a whole number of ms (0 = no limit), got ${String(value)}`, 'type');
    return value as number | undefined;
  }),
  /**
   * Total deliveries of this URN's messages, the first included.
   * @defaultValue the server's `maxAttempts`
   */
  maxAttempts: sharedRows.maxAttempts(),
  /**
   * Spacing of this URN's retries (docs/retries.md#retry-policy).
   * @defaultValue the server's `retryPolicy`
   */
  retryPolicy: sharedRows.retryPolicy(),
  /**
   * `'key'`: this URN's messages of one key run one at a time, in order, and are retried in place
   * (docs/scale.md#per-key-order); handlers sharing a subscription must agree.
   * @defaultValue the server's `ordering`
   */
  ordering: sharedRows.ordering(),
  /**
   * With `ordering: 'key'`, a message of this URN whose handler failed for good: `'dead-letter'`, or `'block-key'`
   * (kept unacknowledged, its key waits until unblocked; docs/scale.md#per-key-order); handlers sharing a
   * subscription must agree.
   * @defaultValue the server's `onExhausted`
   */
  onExhausted: sharedRows.onExhausted(),
  /**
   * `{ store }`: skip a message whose `meta.id` this handler already handled (docs/idempotency.md; see @Idempotent).
   * @defaultValue none
   */
  idempotency: passThrough<IdempotencyOptions>(),
  /**
   * `true`: run in the server's inbox, a PostgreSQL transaction that first records the message id
   * (docs/exactly-once.md#the-inbox); `false`: not, even with the inbox's `every: true`.
   * @defaultValue the inbox's `every`
   */
  inbox: sharedRows.inbox(),
  /**
   * The topic this handler consumes instead of the server's topics (short `payments` or full name); the server
   * subscribes each distinct topic and subscription once and routes within it.
   * @defaultValue the server's topics
   */
  topic: sharedRows.topic(),
  /**
   * The subscription this handler consumes through.
   * @defaultValue the server's `subscription`
   */
  subscription: sharedRows.subscription(),
  /**
   * The key of this handler's entry in the server's `handlers` option (settings from configuration), e.g.
   * `"payments.charge"`: that entry applies before those keyed by `Controller.method` or the URN
   * (docs/configuration.md#handler-settings-from-configuration).
   * @defaultValue none
   */
  settingsKey: option<string>((value, name, raise) => optionalName(value, name, '"payments.charge"', raise)),
  /**
   * The named registration (`BabelQueueModule.forRoot({ name })`) whose server runs this handler.
   * @defaultValue the unnamed registration
   */
  connection: option<string>((value, name, raise) => optionalName(value, name, '"payments"', raise)),
  /**
   * JSON Schema of `data` (docs/schemas.md): a message that breaks it is dead-lettered at once with every
   * violation; `x-gdpr-sensitive` fields are decrypted first.
   * @defaultValue the URN contract's schema, if any
   */
  schema: passThrough<PayloadSchema>(),
  /**
   * Pulsar consumer settings of the subscription this handler consumes through (docs/pulsar-features.md#client-options),
   * merged over the server's `consumerOptions`; handlers sharing a subscription must agree on them.
   * @defaultValue the server's `consumerOptions`
   */
  consumerOptions: consumerOptions.consumerOptions,
  /**
   * A circuit breaker for this handler's subscription (docs/retries.md#circuit-breaker): `true` or some of
   * `{ failureRatio, windowMs, minimumMessages, openMs, probes }`; handlers sharing a subscription must agree.
   * @defaultValue the server's `circuitBreaker`
   */
  circuitBreaker: sharedRows.circuitBreaker(),
  /**
   * Handler calls started per second at most on this handler's subscription, per instance
   * (docs/retries.md#rate-limit); handlers sharing a subscription must agree.
   * @defaultValue the server's `maxPerSecond`
   */
  maxPerSecond: sharedRows.maxPerSecond(),
  /**
   * Which failures of this handler are worth a retry: `true` retries, `false` dead-letters at once, `undefined`
   * leaves it to the module's `isRetriable`, then to the built-in rule (docs/pulsar-features.md#your-own-retriable-rule).
   * @defaultValue the server's `isRetriable`
   */
  isRetriable: consumerOptions.isRetriable,
  /**
   * Handle messages in batches (docs/pulsar-features.md#batch-handlers): `{ maxMessages, maxWaitMs }`; the method
   * receives an array of payloads and a BabelBatchContext, and each message is still settled on its own.
   * @defaultValue none (one message per call)
   */
  batch: option<BatchOptions, ResolvedBatchOptions | undefined>((value, name) => checkBatchOptions(value, name)),
  /**
   * Consume every topic of one namespace whose name matches (docs/pulsar-features.md#topic-patterns), instead of
   * the server's topics: `"orders-.*"` (public/default), `"tenant/ns/orders-.*"`, a full name, or a RegExp without
   * flags. Topics created later are found every `patternDiscoveryMs`; dead-letter topics never match.
   * @defaultValue none
   */
  topicsPattern: option<string | RegExp, TopicPattern | undefined>((value, name) =>
    value === undefined ? undefined : parseTopicPattern(value, name),
  ),
  /**
   * How often the namespace is listed for new matching topics, ms (100 to 3600000); with `topicsPattern` only.
   * @defaultValue `30000`
   */
  patternDiscoveryMs: option<number>((value, name, raise) => {
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 100 && (value as number) <= 3_600_000))
      return raise(`${name} must be a whole number of ms from 100 to 3600000, got ${String(value)}`, 'range');
    return value as number | undefined;
  }),
};

export const DEFAULT_PATTERN_DISCOVERY_MS = 30_000;

/** The rules between @BabelHandler options, checked once each is valid on its own. */
export function checkHandlerCombination(
  options: {
    topic?: string;
    topicsPattern?: TopicPattern;
    patternDiscoveryMs?: number;
    batch?: ResolvedBatchOptions;
    inbox?: boolean;
    ordering?: string;
  },
  given: { idempotency?: unknown },
): void {
  if (options.topicsPattern === undefined && options.patternDiscoveryMs !== undefined)
    throw new TypeError('@BabelHandler patternDiscoveryMs is only for a handler with topicsPattern');
  if (options.topicsPattern !== undefined && options.topic !== undefined)
    throw new TypeError(
      '@BabelHandler takes topic or topicsPattern, not both: a pattern handler consumes what matches',
    );
  if (options.batch && options.inbox)
    throw new TypeError(
      '@BabelHandler batch cannot be combined with inbox: the inbox runs one message per transaction',
    );
  if (options.batch && options.ordering === 'key')
    throw new TypeError(
      "@BabelHandler batch cannot be combined with ordering 'key': a batch runs many messages of one key at once",
    );
  if (options.batch && given.idempotency)
    throw new TypeError(
      '@BabelHandler batch cannot be combined with idempotency (its interceptor sees one message): use the ' +
        "module's idempotency option, which skips each already handled message before it joins a batch",
    );
}
