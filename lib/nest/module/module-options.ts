import { clientKindFor, type PulsarAuthOptions, type PulsarClientKind } from '../../pulsar/client-factory.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { resolveTelemetry, type ResolvedTelemetry, type TelemetryOption } from '../../otel/telemetry-options.js';
import type { FieldCipher } from '../../schema/gdpr.js';
import {
  checkKnownKeys,
  isPlainObject,
  option,
  resolveOptions,
  type OptionsInput,
  type RaiseOptionError,
} from '../../options/option-table.js';
import { integer, oneOf } from '../../options/validators.js';
import { checkConsumerCombination, checkConsumerOptionsFor, consumerOptions } from '../options/consumer-options.js';
import { topicOption } from '../options/topic-option.js';
import { checkedProducerSettings, clientNameOf, producerOptionEntries } from '../client/producer-settings.js';
import type { ProducerOptionsSettings, PulsarClientName } from '../../pulsar/client-options.js';
import { resolveServerSettings, serverOptionTable, type ResolvedServerSettings } from '../server/server-options.js';
import { resolveHooks, type BabelQueueHooksOption, type ResolvedHooks } from './hooks-option.js';
import { BabelQueueOptionsError } from './options-error.js';
import { resolveOutbox, type BabelQueueOutboxOptions, type ResolvedOutbox } from './outbox-option.js';

export { BabelQueueOptionsError } from './options-error.js';
export { HOOK_NAMES, type BabelQueueHooksOption, type HookName, type ResolvedHooks } from './hooks-option.js';
export type { BabelQueueOutboxOptions, ResolvedOutbox } from './outbox-option.js';

const raiseModuleError: RaiseOptionError = (message) => {
  throw new BabelQueueOptionsError(message);
};

/** How the module's BabelPulsarServer consumes (the server's consumer options, minus producers of your own). */
export type BabelQueueConsumerOptions = OptionsInput<typeof consumerOptions>;
const CONSUMER_KEYS = Object.keys(consumerOptions);

const DEFAULT_NOT_STARTED_AFTER_MS = 5000;

/** Every option of `BabelQueueModule.forRoot(options)`, each declared once. */
export const moduleOptionTable = {
  /**
   * Broker URL; the scheme picks the client: `pulsar://` / `pulsar+ssl://` → the native `pulsar-client` package
   * (loaded when the client is first needed; a clear error if it is not installed), `http(s)://` / `ws(s)://` →
   * the built-in WebSocket client on the broker's web service port. Give either `serviceUrl` or `client`.
   */
  serviceUrl: option<string, { url: string; kind: PulsarClientKind } | undefined>((value, name, raise) =>
    value === undefined
      ? undefined
      : { url: (value as string).trim(), kind: clientKindFor(value, name, (message) => raise(message, 'type')) },
  ),
  /** A ready Pulsar client (a native `Client` or a `PulsarWebSocketClient`) instead of `serviceUrl`; the module never closes it. */
  client: option<PulsarClientLike>((value, name, raise) => {
    if (value === undefined) return undefined;
    const client = value as Partial<PulsarClientLike> | null;
    if (
      typeof value !== 'object' ||
      client === null ||
      typeof client.createProducer !== 'function' ||
      typeof client.subscribe !== 'function' ||
      typeof client.close !== 'function'
    )
      return raise(`${name} must be a Pulsar client (a pulsar-client Client or a PulsarWebSocketClient)`, 'type');
    return value as PulsarClientLike;
  }),
  /**
   * `{ token }`: token authentication for the client created from `serviceUrl` (a JWT, or a function returning one).
   * @defaultValue none
   */
  auth: option<PulsarAuthOptions>((value, name, raise) => {
    if (value === undefined) return undefined;
    const token = isPlainObject(value) ? value.token : undefined;
    const tokenValid = typeof token === 'function' || (typeof token === 'string' && token.trim() !== '');
    if (!tokenValid || Object.keys(value as object).some((key) => key !== 'token'))
      return raise(
        `${name} must be { token: "<JWT>" } with a non-blank token, or { token: () => string | Promise<string> }`,
        'type',
      );
    return value as PulsarAuthOptions;
  }),
  /**
   * Extra options for the client created from `serviceUrl` (native ClientConfig or WebSocket client options).
   * @defaultValue `{}`
   */
  clientOptions: option<Record<string, unknown>>((value, name, raise) => {
    if (value !== undefined && !isPlainObject(value)) return raise(`${name} must be an object`, 'type');
    return value as Record<string, unknown> | undefined;
  }),
  /** The default topic: where `publish()` and `emit()` send, and what the server consumes unless `consumer.topics` says otherwise. */
  topic: topicOption(),
  /** The server's consumer settings (the `consumer.*` rows). */
  consumer: option<BabelQueueConsumerOptions, Record<string, unknown>>((value, name, raise) => {
    if (value === undefined) return {};
    if (!isPlainObject(value)) return raise(`${name} must be an object`, 'type');
    checkKnownKeys(value, CONSUMER_KEYS, name, raise);
    return value;
  }),
  /**
   * Settlement hooks: an object of functions (onError, onUnknownUrn, onRoutingMismatch, onDeadLetter), or an
   * injectable class implementing `BabelQueueHooks` (resolved through DI).
   * @defaultValue none
   */
  hooks: option<BabelQueueHooksOption, ResolvedHooks>((value, name, raise) => resolveHooks(value, name, raise)),
  /**
   * Where the server's consumers log.
   * @defaultValue a Nest `Logger`
   */
  logger: serverOptionTable.logger,
  /**
   * Every handler skips a message whose `meta.id` was already handled: `{ store }` (docs/idempotency.md).
   * @defaultValue none
   */
  idempotency: serverOptionTable.idempotency,
  /**
   * Inbox handlers run in a PostgreSQL transaction that first records their message id: `{ store, every? }`
   * (docs/exactly-once.md#the-inbox).
   * @defaultValue none
   */
  inbox: serverOptionTable.inbox,
  /**
   * The [warnings at start-up](docs/configuration.md#warnings-at-start-up) for wiring that would fail in silence:
   * `false` turns them off, `{ serverNotStartedAfterMs }` (default 5000) sets when an unstarted server with
   * handlers is reported.
   * @defaultValue `true`
   */
  startupWarnings: option<
    boolean | { serverNotStartedAfterMs?: number },
    { enabled: boolean; serverNotStartedAfterMs: number }
  >((value, name, raise) => {
    if (value === undefined || typeof value === 'boolean')
      return { enabled: value !== false, serverNotStartedAfterMs: DEFAULT_NOT_STARTED_AFTER_MS };
    if (!isPlainObject(value)) return raise(`${name} must be true, false or { serverNotStartedAfterMs }`, 'type');
    checkKnownKeys(value, ['serverNotStartedAfterMs'], name, raise);
    const after = integer({
      min: 0,
      must: 'a whole number of ms',
      fallback: DEFAULT_NOT_STARTED_AFTER_MS,
    }).resolve(value.serverNotStartedAfterMs, `${name}.serverNotStartedAfterMs`, raise);
    return { enabled: true, serverNotStartedAfterMs: after };
  }),
  /**
   * OpenTelemetry for the server and the publisher, when `@opentelemetry/api` is installed: spans and trace
   * headers (`tracing`) and consumer metrics (`metrics`). `false` turns both off, `{ tracing: false }` or
   * `{ metrics: false }` one of them.
   * @defaultValue both on
   */
  telemetry: option<TelemetryOption, ResolvedTelemetry | undefined>((value, name, raise) =>
    value === undefined ? undefined : resolveTelemetry(value, name, raise),
  ),
  /**
   * How long `publish()` waits for the broker (client, producer, send) before it rejects with a `PublishError`
   * naming the topic and what to check; `0` = as long as the Pulsar client waits. Per call:
   * `publish(urn, data, { timeoutMs })`.
   * @defaultValue `10000`
   */
  publishTimeoutMs: integer({ min: 0, must: 'a whole number of ms >= 0 (0 = no time-out)' }),
  /**
   * How long the client's `send()` waits for its reply before it errors with a `RequestTimeoutError`
   * (docs/request-response.md). Per call: `send(urn, data, { timeoutMs })`.
   * @defaultValue `30000`
   */
  requestTimeoutMs: integer({ min: 1, must: 'a whole number of ms >= 1' }),
  /**
   * `'required'`: the app fails to start when the broker does not answer. `'optional'`: the app starts anyway,
   * health reports down, the consumers subscribe and the publisher's producer for `topic` connects once the broker
   * answers (one log line each way for each), and a publish meanwhile fails with a PublishError at the latest
   * after `publishTimeoutMs`. A subscription first made then starts at `Earliest` (unless
   * `consumer.subscriptionInitialPosition` says otherwise), so what the app published before it is handled.
   * @defaultValue `'required'`
   */
  brokerAtStart: oneOf(['required', 'optional']),
  /**
   * The transactional outbox (docs/outbox.md): `{ pool, table?, migrate?, relay?, schedules?, deduplication? }`,
   * `pool` a `pg` Pool on the database of the outbox table. The module runs an OutboxRelay that publishes the
   * committed rows (`relay: false` on instances that only write; `relay: { batchSize, parkAfterAttempts, … }` tunes
   * it, docs/outbox.md#relaying-outboxrelay); BabelOutbox (the writer) is provided either way. `schedules: true` (or
   * `{ table, pollIntervalMs, … }`) stores scheduled messages beside it (docs/scheduling.md). `deduplication: {
   * producerName }` makes the relay one the broker deduplicates (native client;
   * docs/exactly-once.md#a-relay-the-broker-deduplicates).
   * @defaultValue none
   */
  outbox: option<BabelQueueOutboxOptions, ResolvedOutbox>((value, name, raise) => resolveOutbox(value, name, raise)),
  /**
   * GDPR field encryption (docs/schemas.md): `{ cipher }` encrypts the `x-gdpr-sensitive` fields of a schema on
   * publish and decrypts them before the handler runs (e.g. `new AesGcmCipher(key)`).
   * @defaultValue none
   */
  gdpr: option<{ cipher: FieldCipher }, FieldCipher | undefined>((value, name, raise) => {
    if (value === undefined) return undefined;
    const cipher = isPlainObject(value) ? (value.cipher as Partial<FieldCipher> | undefined) : undefined;
    if (typeof cipher?.encrypt !== 'function' || typeof cipher.decrypt !== 'function')
      return raise(`${name} must be { cipher } with encrypt and decrypt (e.g. new AesGcmCipher(key))`, 'type');
    return cipher as FieldCipher;
  }),
  ...producerOptionEntries,
};
const MODULE_KEYS = Object.keys(moduleOptionTable);

/** The options of `BabelQueueModule.forRoot(options)` (and what a forRootAsync factory returns). */
export type BabelQueueModuleOptions = OptionsInput<typeof moduleOptionTable>;

/** A useClass / useExisting options factory for forRootAsync. */
export interface BabelQueueOptionsFactory {
  createBabelQueueOptions(): BabelQueueModuleOptions | Promise<BabelQueueModuleOptions>;
}

export type ClientSource =
  | { kind: 'provided'; client: PulsarClientLike }
  | { kind: PulsarClientKind; serviceUrl: string; auth?: PulsarAuthOptions; clientOptions?: Record<string, unknown> };

/** The module options after validation. */
export interface ResolvedModuleOptions {
  source: ClientSource;
  topic: string | undefined;
  /**
   * The server's settings, resolved by the server's own table (defaults applied): the registration adds its name,
   * client, producers and hooks, and the server takes them without validating again.
   */
  server: ResolvedServerSettings;
  hooks: ResolvedHooks;
  startupWarnings: { enabled: boolean; serverNotStartedAfterMs: number };
  /** Present when options.telemetry was given (the server has it too, in `server`). */
  telemetry?: ResolvedTelemetry;
  publishTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The producer pool's Pulsar settings, checked against the client. */
  producerSettings: ProducerOptionsSettings;
  outbox: ResolvedOutbox;
  cipher?: FieldCipher;
}

/** forRoot's keys that name and scope the registration rather than configure it (module-definition.ts). */
const REGISTRATION_KEYS: readonly string[] = ['isGlobal', 'name'];

/** Validates the module options at start-up, in one pass; every error names the option and what is allowed. */
export function resolveModuleOptions(input: unknown): ResolvedModuleOptions {
  if (!isPlainObject(input)) {
    throw new BabelQueueOptionsError(
      'BabelQueueModule.forRoot() needs an options object (for forRootAsync, the factory must return one)',
    );
  }
  // isGlobal and name are the registration's, which forRoot takes before these options are checked.
  checkKnownKeys(
    input,
    MODULE_KEYS,
    'options',
    raiseModuleError,
    (key) =>
      CONSUMER_KEYS.includes(key)
        ? ` (it belongs in options.consumer.${key})`
        : REGISTRATION_KEYS.includes(key)
          ? ` here (forRootAsync takes ${key} beside useFactory, not from the factory's result)`
          : '',
    REGISTRATION_KEYS,
  );
  const source = sourceOf(input);
  const options = resolveOptions(moduleOptionTable, input, 'options', raiseModuleError);
  const consumer = resolveOptions(consumerOptions, options.consumer, 'options.consumer', raiseModuleError);
  const topics = consumer.topics ?? (options.topic === undefined ? undefined : [options.topic]);
  if (topics === undefined) {
    throw new BabelQueueOptionsError(
      'options.topic (the default topic to publish to and consume from) or options.consumer.topics is required',
    );
  }
  checkConsumerCombination(consumer, 'options.consumer', raiseModuleError);
  const client = clientNameOfSource(source);
  consumer.consumerOptions = checkConsumerOptionsFor(
    consumer.consumerOptions,
    client,
    'options.consumer.consumerOptions',
    raiseModuleError,
  );
  const producerSettings = checkedProducerSettings(client, options, 'options.', raiseModuleError);
  const { logger, idempotency, telemetry, brokerAtStart, publishTimeoutMs, requestTimeoutMs, startupWarnings } =
    options;
  const cipher = options.gdpr;
  const given = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
  // The server's table resolves the server's settings from what was given (its defaults are the only ones).
  const { topics: _topics, ...givenConsumer } = isPlainObject(input.consumer) ? input.consumer : {};
  const server = resolveServerSettings(
    {
      ...givenConsumer,
      topics,
      consumerOptions: consumer.consumerOptions,
      ...given('logger', logger),
      ...given('idempotency', idempotency),
      ...given('inbox', options.inbox),
      ...given('cipher', cipher),
      telemetry: input.telemetry,
      ...given('brokerAtStart', brokerAtStart),
      startupWarnings: startupWarnings.enabled,
      producerOptions: input.producerOptions,
      producerOptionsByTopic: input.producerOptionsByTopic,
    },
    client,
    'options',
    raiseModuleError,
  );
  return {
    source,
    topic: options.topic,
    server,
    producerSettings,
    ...given('publishTimeoutMs', publishTimeoutMs),
    ...given('requestTimeoutMs', requestTimeoutMs),
    hooks: options.hooks,
    outbox: options.outbox,
    ...given('cipher', cipher),
    startupWarnings,
    ...given('telemetry', telemetry),
  };
}

/** The client the options will run on, when known before it exists: a pass-through setting it lacks fails now. */
function clientNameOfSource(source: ClientSource): PulsarClientName | undefined {
  return source.kind === 'provided' ? clientNameOf(source.client) : source.kind;
}

/** Where the client comes from: exactly one of serviceUrl and client, auth and clientOptions only with serviceUrl. */
function sourceOf(options: Record<string, unknown>): ClientSource {
  const { serviceUrl, client, auth, clientOptions } = options;
  if (serviceUrl !== undefined && client !== undefined) {
    throw new BabelQueueOptionsError('give either serviceUrl or client, not both');
  }
  if (client !== undefined) {
    const provided = moduleOptionTable.client.resolve(client, 'options.client', raiseModuleError)!;
    if (auth !== undefined || clientOptions !== undefined) {
      throw new BabelQueueOptionsError(
        'options.auth and options.clientOptions apply to a client created from serviceUrl; configure your own client yourself',
      );
    }
    return { kind: 'provided', client: provided };
  }
  const url = moduleOptionTable.serviceUrl.resolve(serviceUrl, 'options.serviceUrl', raiseModuleError);
  if (url === undefined) {
    throw new BabelQueueOptionsError(
      'options.serviceUrl (pulsar://host:6650, pulsar+ssl://…, http(s)://host:8080 or ws(s)://…) or options.client is required',
    );
  }
  return {
    kind: url.kind,
    serviceUrl: url.url,
    ...(auth !== undefined && { auth: auth as PulsarAuthOptions }),
    ...(clientOptions !== undefined && { clientOptions: clientOptions as Record<string, unknown> }),
  };
}
