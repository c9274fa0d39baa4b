import type { Type } from '@nestjs/common';
import type { BabelQueueHooks, ConsumerLogger, RetryPolicy } from '../consumer/index.js';
import { BabelQueueError } from '../envelope/index.js';
import { clientKindFor, type PulsarAuthOptions, type PulsarClientKind } from '../pulsar/client-factory.js';
import type { PulsarClientLike, PulsarConsumer, PulsarProducer, SubscriptionType } from '../pulsar/client-types.js';
import { parseTopic } from '../pulsar/websocket/index.js';
import { checkIdempotencyOptions, type IdempotencyOptions } from '../idempotency/store.js';
import { resolveTelemetry, type ResolvedTelemetry, type TelemetryOption } from '../otel/telemetry-options.js';
import { resolveServerOptions, type BabelPulsarServerOptions } from './server-options.js';
import type { RetriableRule } from './retriable-rule.js';
import { describeValue } from '../describe-value.js';
import type { OutboxRelayOptions } from '../outbox/relay.js';
import type { FieldCipher } from '../schema/gdpr.js';
import type { OutboxPool } from '../outbox/relay-store.js';
import { checkOutboxTable, DEFAULT_OUTBOX_TABLE } from '../outbox/table.js';

/** How the module's BabelPulsarServer consumes (the server options, minus what the module supplies). */
export interface BabelQueueConsumerOptions {
  /** Topics to consume. Default: `[topic]`. */
  topics?: string | string[];
  /** Default `babelqueue`. */
  subscription?: string;
  /** Default `Shared`. */
  subscriptionType?: SubscriptionType;
  /** Total deliveries per message, the first included. Default 3. */
  maxAttempts?: number;
  /** `'republish'` (default: a copy with bq-attempts + 1 goes back to the topic) or `'nack'`. */
  retry?: 'republish' | 'nack';
  /**
   * Spacing of retries (`retry: 'republish'` on a Shared or KeyShared subscription): the retry copy waits on the
   * broker. Default: none, a retry is due at once. Per handler: `@BabelHandler(urn, { retryPolicy })`.
   */
  retryPolicy?: RetryPolicy;
  /** Dead-letter topic: `true` (default in the module) = `<topic>.dlq`, a topic name, or `false` (drop and log). */
  deadLetter?: boolean | string;
  /** Messages handled at once per topic. Default 1. */
  concurrency?: number;
  /** Passed to the Pulsar consumer. */
  receiverQueueSize?: number;
  /** Where a new subscription starts: `Latest` (Pulsar's default) or `Earliest`. */
  subscriptionInitialPosition?: 'Latest' | 'Earliest';
  /** With `retry: 'nack'`: how long before a negatively acknowledged message comes back (client default 60000). */
  nackRedeliverTimeoutMs?: number;
  /** How long shutdown waits for in-flight handlers. Default 10000. */
  shutdownTimeoutMs?: number;
  /** How long one receive waits before checking for shutdown. Default 500. */
  receiveTimeoutMs?: number;
  /** A handler running longer counts as a failed attempt. Default 60000; 0 = no limit; per handler: @BabelHandler. */
  handlerTimeoutMs?: number;
  /** The stack trace of a failure on its log line instead of at debug level. Default false. */
  logStackTraces?: boolean;
  /**
   * Which failures are worth a retry: `true` retries, `false` dead-letters at once, `undefined` leaves it to the
   * built-in rule; a handler's own `isRetriable` is asked first (docs/pulsar-features.md#your-own-retriable-rule).
   */
  isRetriable?: RetriableRule;
}

/**
 * Settlement hooks: a plain object of functions, or an injectable class implementing BabelQueueHooks. A class is
 * resolved through Nest's DI, so it can inject other services: the instance registered as a provider anywhere in
 * the application is used, else the module creates one (its dependencies then come from global modules and the
 * `imports` of forRootAsync).
 */
export type BabelQueueHooksOption = BabelQueueHooks | Type<BabelQueueHooks>;

export interface BabelQueueModuleOptions {
  /**
   * Broker URL; the scheme picks the client: `pulsar://` / `pulsar+ssl://` → the native `pulsar-client` package
   * (install it), `http(s)://` / `ws(s)://` → the built-in WebSocket client (the broker's web service port).
   * Give either `serviceUrl` or `client`.
   */
  serviceUrl?: string;
  /** A ready Pulsar client instead of `serviceUrl`. The module never closes it. */
  client?: PulsarClientLike;
  /** Token authentication for the client created from `serviceUrl`. */
  auth?: PulsarAuthOptions;
  /** Extra options for the client created from `serviceUrl` (native ClientConfig or WebSocket client options). */
  clientOptions?: Record<string, unknown>;
  /** The default topic: where BabelPulsarClient publishes and emits, and what the server consumes by default. */
  topic?: string;
  /** The server's consumer settings. */
  consumer?: BabelQueueConsumerOptions;
  /** Settlement hooks (functions object or DI class). */
  hooks?: BabelQueueHooksOption;
  /** Logger of the server's consumers (defaults to a Nest Logger). */
  logger?: ConsumerLogger;
  /** Every handler skips a message whose `meta.id` was already handled: `{ store }` (docs/idempotency.md). */
  idempotency?: IdempotencyOptions;
  /**
   * The warnings logged at start-up for wiring that would fail in silence (docs/configuration.md#warnings-at-start-up):
   * `true` (default), `false`, or `{ serverNotStartedAfterMs }` (default 5000): how long after the application
   * started a server with handlers may still be unstarted before it is reported.
   */
  startupWarnings?: boolean | { serverNotStartedAfterMs?: number };
  /**
   * OpenTelemetry for the module's server and publisher, when `@opentelemetry/api` is installed: spans and
   * trace headers (`tracing`) and consumer metrics (`metrics`), both on by default. `false` turns both off,
   * `{ tracing: false }` or `{ metrics: false }` one of them.
   */
  telemetry?: TelemetryOption;
  /**
   * How long BabelPulsarClient's publish waits for the broker before it rejects with a PublishError naming the
   * topic. Default 10000 ms; 0 = as long as the Pulsar client waits. Per call: `publish(urn, data, { timeoutMs })`.
   */
  publishTimeoutMs?: number;
  /**
   * `'required'` (default): the app fails to start when the broker does not answer. `'optional'`: the app starts
   * anyway, health reports down, the consumers subscribe once the broker answers (one log line each way), and a
   * publish meanwhile fails with a PublishError at the latest after `publishTimeoutMs`.
   */
  brokerAtStart?: 'required' | 'optional';
  /**
   * The transactional outbox (docs/outbox.md): `pool` is a `pg` Pool on the database of the outbox table. The
   * module then runs an OutboxRelay that publishes the committed rows (`relay: false` on instances that only
   * write). BabelOutbox (the writer) is provided either way.
   */
  outbox?: BabelQueueOutboxOptions;
  /**
   * GDPR field encryption (docs/schemas.md): the cipher that encrypts the `x-gdpr-sensitive` fields of a
   * schema on publish and decrypts them before the handler runs (e.g. `new AesGcmCipher(key)`).
   */
  gdpr?: { cipher: FieldCipher };
}

export interface BabelQueueOutboxOptions {
  pool: OutboxPool;
  /** The outbox table; default `babelqueue_outbox`. */
  table?: string;
  /** Create the table (outboxMigrationSql) at start-up when it does not exist; default false. */
  migrate?: boolean;
  /** The relay: on by default; `false` turns it off, an object tunes it. */
  relay?: boolean | Pick<OutboxRelayOptions, 'batchSize' | 'pollIntervalMs' | 'publishTimeoutMs'>;
}

/** A useClass / useExisting options factory for forRootAsync. */
export interface BabelQueueOptionsFactory {
  createBabelQueueOptions(): BabelQueueModuleOptions | Promise<BabelQueueModuleOptions>;
}

export type ClientSource =
  | { kind: 'provided'; client: PulsarClientLike }
  | { kind: PulsarClientKind; serviceUrl: string; auth?: PulsarAuthOptions; clientOptions?: Record<string, unknown> };

export type ResolvedHooks =
  | { kind: 'none' }
  | { kind: 'object'; hooks: BabelQueueHooks }
  | { kind: 'class'; type: Type<BabelQueueHooks>; methods: HookName[] };

/** The module options after validation. */
export interface ResolvedModuleOptions {
  source: ClientSource;
  topic: string | undefined;
  /** Ready for the BabelPulsarServer, less client, producers and hooks. */
  server: Omit<BabelPulsarServerOptions, 'client' | 'producers' | HookName>;
  hooks: ResolvedHooks;
  startupWarnings: { enabled: boolean; serverNotStartedAfterMs: number };
  /** Present when options.telemetry was given (the server has it too, in `server`). */
  telemetry?: ResolvedTelemetry;
  publishTimeoutMs?: number;
  outbox: ResolvedOutbox;
  cipher?: FieldCipher;
}

export interface ResolvedOutbox {
  table: string;
  pool?: OutboxPool;
  migrate: boolean;
  /** The relay's settings, or null when no relay runs here. */
  relay: Pick<OutboxRelayOptions, 'batchSize' | 'pollIntervalMs' | 'publishTimeoutMs'> | null;
}

function resolveOutbox(outbox: unknown): ResolvedOutbox {
  if (outbox === undefined) return { table: DEFAULT_OUTBOX_TABLE, migrate: false, relay: null };
  if (!isObject(outbox)) throw new BabelQueueOptionsError('options.outbox must be an object: { pool, table?, relay? }');
  checkKeys(outbox, ['pool', 'table', 'migrate', 'relay'], 'options.outbox');
  const options = outbox as unknown as BabelQueueOutboxOptions;
  if (typeof options.pool?.connect !== 'function') {
    throw new BabelQueueOptionsError('options.outbox.pool must be a pg Pool (new Pool({ connectionString }))');
  }
  let table: string;
  try {
    table = checkOutboxTable(options.table, 'options.outbox.table');
  } catch (error) {
    throw new BabelQueueOptionsError((error as Error).message);
  }
  if (options.migrate !== undefined && typeof options.migrate !== 'boolean') {
    throw new BabelQueueOptionsError('options.outbox.migrate must be true or false');
  }
  const relay = options.relay ?? true;
  if (typeof relay !== 'boolean' && !isObject(relay)) {
    throw new BabelQueueOptionsError(
      'options.outbox.relay must be true, false or { batchSize, pollIntervalMs, publishTimeoutMs }',
    );
  }
  if (isObject(relay)) checkKeys(relay, ['batchSize', 'pollIntervalMs', 'publishTimeoutMs'], 'options.outbox.relay');
  return {
    table,
    pool: options.pool,
    migrate: options.migrate ?? false,
    relay: relay === false ? null : relay === true ? {} : relay,
  };
}

export const HOOK_NAMES = ['onError', 'onUnknownUrn', 'onRoutingMismatch', 'onDeadLetter'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

const MODULE_KEYS = [
  'serviceUrl',
  'client',
  'auth',
  'clientOptions',
  'topic',
  'consumer',
  'hooks',
  'logger',
  'idempotency',
  'startupWarnings',
  'telemetry',
  'publishTimeoutMs',
  'brokerAtStart',
  'outbox',
  'gdpr',
] as const;
const CONSUMER_KEYS = [
  'topics',
  'subscription',
  'subscriptionType',
  'maxAttempts',
  'retry',
  'retryPolicy',
  'deadLetter',
  'concurrency',
  'receiverQueueSize',
  'shutdownTimeoutMs',
  'receiveTimeoutMs',
  'handlerTimeoutMs',
  'logStackTraces',
  'subscriptionInitialPosition',
  'nackRedeliverTimeoutMs',
  'isRetriable',
] as const;

/** The error every invalid module option raises: it names the option and what is allowed. */
export class BabelQueueOptionsError extends BabelQueueError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Invalid BabelQueueModule options: ${message}`, options);
    this.name = 'BabelQueueOptionsError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const stubConsumer: PulsarConsumer = {
  receive: () => Promise.reject(new Error('stub')),
  acknowledge: async () => null,
  negativeAcknowledge: () => undefined,
  close: async () => null,
  unsubscribe: async () => null,
};
const stubClient: PulsarClientLike = {
  createProducer: () => Promise.reject(new Error('stub')) as Promise<PulsarProducer>,
  subscribe: async () => stubConsumer,
  close: async () => null,
};

function checkKeys(value: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (allowed.includes(key)) continue;
    const hint =
      where === 'options' && (CONSUMER_KEYS as readonly string[]).includes(key)
        ? ` (it belongs in options.consumer.${key})`
        : '';
    throw new BabelQueueOptionsError(`${where}.${key} is not an option${hint}; allowed: ${allowed.join(', ')}`);
  }
}

function checkTopicName(topic: unknown, name: string): string {
  if (typeof topic !== 'string' || topic.trim() === '') {
    throw new BabelQueueOptionsError(
      `${name} must be a non-blank topic name such as "orders" or "persistent://public/default/orders"`,
    );
  }
  try {
    parseTopic(topic.trim());
  } catch (error) {
    throw new BabelQueueOptionsError(`${name}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return topic.trim();
}

function isClient(value: unknown): value is PulsarClientLike {
  const client = value as Partial<PulsarClientLike> | null;
  return (
    typeof value === 'object' &&
    client !== null &&
    typeof client.createProducer === 'function' &&
    typeof client.subscribe === 'function' &&
    typeof client.close === 'function'
  );
}

function resolveSource(options: BabelQueueModuleOptions): ClientSource {
  const { serviceUrl, client, auth, clientOptions } = options;
  if (serviceUrl !== undefined && client !== undefined) {
    throw new BabelQueueOptionsError('give either serviceUrl or client, not both');
  }
  if (client !== undefined) {
    if (!isClient(client)) {
      throw new BabelQueueOptionsError(
        'options.client must be a Pulsar client (a pulsar-client Client or a PulsarWebSocketClient)',
      );
    }
    if (auth !== undefined || clientOptions !== undefined) {
      throw new BabelQueueOptionsError(
        'options.auth and options.clientOptions apply to a client created from serviceUrl; configure your own client yourself',
      );
    }
    return { kind: 'provided', client };
  }
  if (serviceUrl === undefined) {
    throw new BabelQueueOptionsError(
      'options.serviceUrl (pulsar://host:6650, pulsar+ssl://…, http(s)://host:8080 or ws(s)://…) or options.client is required',
    );
  }
  let kind: PulsarClientKind;
  try {
    kind = clientKindFor(serviceUrl, 'options.serviceUrl');
  } catch (error) {
    throw new BabelQueueOptionsError((error as Error).message, { cause: error });
  }
  if (auth !== undefined) {
    const token = isObject(auth) ? auth.token : undefined;
    const tokenValid = typeof token === 'function' || (typeof token === 'string' && token.trim() !== '');
    if (!tokenValid || Object.keys(auth).some((key) => key !== 'token')) {
      throw new BabelQueueOptionsError(
        'options.auth must be { token: "<JWT>" } with a non-blank token, or { token: () => string | Promise<string> }',
      );
    }
  }
  if (clientOptions !== undefined && !isObject(clientOptions)) {
    throw new BabelQueueOptionsError('options.clientOptions must be an object');
  }
  return {
    kind,
    serviceUrl: serviceUrl.trim(),
    ...(auth !== undefined && { auth }),
    ...(clientOptions !== undefined && { clientOptions }),
  };
}

function hookMethods(type: Type<BabelQueueHooks>): HookName[] {
  const found = new Set<HookName>();
  for (
    let proto = type.prototype as object | null;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of HOOK_NAMES) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor && typeof descriptor.value === 'function') found.add(name);
    }
  }
  return HOOK_NAMES.filter((name) => found.has(name));
}

function resolveHooks(hooks: unknown): ResolvedHooks {
  if (hooks === undefined || hooks === null) return { kind: 'none' };
  if (typeof hooks === 'function') {
    const type = hooks as Type<BabelQueueHooks>;
    const methods = hookMethods(type);
    if (methods.length === 0) {
      throw new BabelQueueOptionsError(
        `options.hooks class ${type.name || '(anonymous)'} has none of the hook methods ${HOOK_NAMES.join(', ')}`,
      );
    }
    return { kind: 'class', type, methods };
  }
  if (!isObject(hooks)) {
    throw new BabelQueueOptionsError(
      `options.hooks must be an object of functions (${HOOK_NAMES.join(', ')}) or an injectable class`,
    );
  }
  for (const [key, value] of Object.entries(hooks)) {
    if ((HOOK_NAMES as readonly string[]).includes(key)) {
      if (value !== undefined && typeof value !== 'function')
        throw new BabelQueueOptionsError(`options.hooks.${key} must be a function`);
    } else if (typeof value === 'function' && /^on[A-Z]/.test(key)) {
      // Other members (state, helpers) may ride along; an unknown on… function is a misspelt hook.
      throw new BabelQueueOptionsError(`options.hooks.${key} is not a hook; allowed: ${HOOK_NAMES.join(', ')}`);
    }
  }
  return { kind: 'object', hooks: hooks as BabelQueueHooks };
}

/** Validates the module options at start-up; every error names the option and what is allowed. */
export function resolveModuleOptions(input: unknown): ResolvedModuleOptions {
  if (!isObject(input)) {
    throw new BabelQueueOptionsError(
      'BabelQueueModule.forRoot() needs an options object (for forRootAsync, the factory must return one)',
    );
  }
  const options = input as BabelQueueModuleOptions;
  checkKeys(options as Record<string, unknown>, MODULE_KEYS, 'options');
  const source = resolveSource(options);
  const topic = options.topic === undefined ? undefined : checkTopicName(options.topic, 'options.topic');

  const rawConsumer: unknown = options.consumer ?? {};
  if (!isObject(rawConsumer)) throw new BabelQueueOptionsError('options.consumer must be an object');
  checkKeys(rawConsumer, CONSUMER_KEYS, 'options.consumer');
  const consumer = rawConsumer as BabelQueueConsumerOptions;
  let topics: string[];
  if (consumer.topics === undefined) {
    if (topic === undefined) {
      throw new BabelQueueOptionsError(
        'options.topic (the default topic to publish to and consume from) or options.consumer.topics is required',
      );
    }
    topics = [topic];
  } else {
    const list = Array.isArray(consumer.topics) ? consumer.topics : [consumer.topics];
    topics = list.map((name, index) => checkTopicName(name, `options.consumer.topics[${index}]`));
  }
  if (consumer.retry !== undefined && consumer.retry !== 'republish' && consumer.retry !== 'nack') {
    throw new BabelQueueOptionsError(
      `options.consumer.retry must be 'republish' or 'nack', got ${describeValue(consumer.retry)}`,
    );
  }
  if (consumer.deadLetter !== undefined && typeof consumer.deadLetter !== 'boolean') {
    if (typeof consumer.deadLetter !== 'string') {
      throw new BabelQueueOptionsError(
        'options.consumer.deadLetter must be true (<topic>.dlq), false (no dead-lettering) or a topic name',
      );
    }
    checkTopicName(consumer.deadLetter, 'options.consumer.deadLetter');
  }
  if (options.idempotency !== undefined) {
    try {
      checkIdempotencyOptions(options.idempotency, 'options.idempotency');
    } catch (error) {
      throw new BabelQueueOptionsError((error as Error).message);
    }
  }
  const cipher = options.gdpr?.cipher;
  if (
    options.gdpr !== undefined &&
    (!isObject(options.gdpr) || typeof cipher?.encrypt !== 'function' || typeof cipher.decrypt !== 'function')
  ) {
    throw new BabelQueueOptionsError(
      'options.gdpr must be { cipher } with encrypt and decrypt (e.g. new AesGcmCipher(key))',
    );
  }
  let telemetry: ResolvedTelemetry | undefined;
  if (options.telemetry !== undefined) {
    try {
      telemetry = resolveTelemetry(options.telemetry, 'options.telemetry');
    } catch (error) {
      throw new BabelQueueOptionsError((error as Error).message);
    }
  }
  if (options.logger !== undefined) {
    const logger = options.logger as Partial<ConsumerLogger> | null;
    if (
      !logger ||
      typeof logger.log !== 'function' ||
      typeof logger.warn !== 'function' ||
      typeof logger.error !== 'function'
    ) {
      throw new BabelQueueOptionsError('options.logger must have log, warn and error methods (a Nest Logger works)');
    }
  }
  const server: ResolvedModuleOptions['server'] = {
    topics,
    // The module dead-letters by default.
    deadLetter: typeof consumer.deadLetter === 'string' ? consumer.deadLetter.trim() : (consumer.deadLetter ?? true),
    ...(consumer.subscription !== undefined && { subscription: consumer.subscription }),
    ...(consumer.subscriptionType !== undefined && { subscriptionType: consumer.subscriptionType }),
    ...(consumer.maxAttempts !== undefined && { maxAttempts: consumer.maxAttempts }),
    ...(consumer.retry !== undefined && { retry: consumer.retry }),
    ...(consumer.retryPolicy !== undefined && { retryPolicy: consumer.retryPolicy }),
    ...(consumer.concurrency !== undefined && { concurrency: consumer.concurrency }),
    ...(consumer.receiverQueueSize !== undefined && { receiverQueueSize: consumer.receiverQueueSize }),
    ...(consumer.shutdownTimeoutMs !== undefined && { shutdownTimeoutMs: consumer.shutdownTimeoutMs }),
    ...(consumer.receiveTimeoutMs !== undefined && { receiveTimeoutMs: consumer.receiveTimeoutMs }),
    ...(consumer.handlerTimeoutMs !== undefined && { handlerTimeoutMs: consumer.handlerTimeoutMs }),
    ...(consumer.logStackTraces !== undefined && { logStackTraces: consumer.logStackTraces }),
    ...(consumer.subscriptionInitialPosition !== undefined && {
      subscriptionInitialPosition: consumer.subscriptionInitialPosition,
    }),
    ...(consumer.nackRedeliverTimeoutMs !== undefined && { nackRedeliverTimeoutMs: consumer.nackRedeliverTimeoutMs }),
    ...(consumer.isRetriable !== undefined && { isRetriable: consumer.isRetriable }),
    ...(options.logger !== undefined && { logger: options.logger }),
    ...(options.idempotency !== undefined && { idempotency: options.idempotency }),
    ...(cipher !== undefined && { cipher }),
    ...(telemetry !== undefined && { telemetry }),
    ...(options.brokerAtStart !== undefined && { brokerAtStart: options.brokerAtStart }),
  };
  if (
    consumer.receiverQueueSize !== undefined &&
    (!Number.isInteger(consumer.receiverQueueSize) || (consumer.receiverQueueSize as number) < 0)
  ) {
    throw new BabelQueueOptionsError(
      `options.consumer.receiverQueueSize must be an integer >= 0, got ${describeValue(consumer.receiverQueueSize)}`,
    );
  }
  try {
    // The server's own checks (types, ranges, nack vs subscription type), run now rather than at first use.
    resolveServerOptions({ ...server, client: stubClient });
  } catch (error) {
    const message = (error as Error).message.replace(/^options\.(?!client|brokerAtStart)/, 'options.consumer.');
    throw new BabelQueueOptionsError(message, { cause: error });
  }
  const { publishTimeoutMs } = options;
  if (
    publishTimeoutMs !== undefined &&
    (typeof publishTimeoutMs !== 'number' || !Number.isInteger(publishTimeoutMs) || publishTimeoutMs < 0)
  ) {
    throw new BabelQueueOptionsError(
      `options.publishTimeoutMs must be a whole number of ms >= 0 (0 = no time-out), got ${describeValue(publishTimeoutMs)}`,
    );
  }
  return {
    source,
    topic,
    server,
    ...(publishTimeoutMs !== undefined && { publishTimeoutMs }),
    hooks: resolveHooks(options.hooks),
    outbox: resolveOutbox(options.outbox),
    ...(cipher !== undefined && { cipher }),
    startupWarnings: resolveStartupWarnings(options),
    ...(telemetry !== undefined && { telemetry }),
  };
}

const DEFAULT_NOT_STARTED_AFTER_MS = 5000;

function resolveStartupWarnings({
  startupWarnings,
}: BabelQueueModuleOptions): ResolvedModuleOptions['startupWarnings'] {
  if (startupWarnings === undefined || startupWarnings === true)
    return { enabled: true, serverNotStartedAfterMs: DEFAULT_NOT_STARTED_AFTER_MS };
  if (startupWarnings === false) return { enabled: false, serverNotStartedAfterMs: DEFAULT_NOT_STARTED_AFTER_MS };
  if (!isObject(startupWarnings))
    throw new BabelQueueOptionsError('options.startupWarnings must be true, false or { serverNotStartedAfterMs }');
  checkKeys(startupWarnings, ['serverNotStartedAfterMs'], 'options.startupWarnings');
  const after = startupWarnings.serverNotStartedAfterMs ?? DEFAULT_NOT_STARTED_AFTER_MS;
  if (!Number.isInteger(after) || after < 0) {
    throw new BabelQueueOptionsError(
      `options.startupWarnings.serverNotStartedAfterMs must be a whole number of ms, got ${describeValue(after)}`,
    );
  }
  return { enabled: true, serverNotStartedAfterMs: after };
}
