import type { BabelQueueHooks, ConsumerLogger } from '../../consumer/index.js';
import { checkIdempotencyOptions, type IdempotencyOptions } from '../../idempotency/store.js';
import { checkInboxOptions, type InboxOptions } from '../../inbox/inbox.js';
import type { FieldCipher } from '../../schema/gdpr.js';
import { resolveTelemetry, type ResolvedTelemetry, type TelemetryOption } from '../../otel/telemetry-options.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import {
  option,
  raiseStandardError,
  resolveOptions,
  type OptionsInput,
  type RaiseOptionError,
  type ResolvedOptions,
} from '../../options/option-table.js';
import { callback, flag, nonBlank, oneOf, passThrough } from '../../options/validators.js';
import {
  checkConsumerCombination,
  checkConsumerOptionsFor,
  serverConsumerOptions,
} from '../options/consumer-options.js';
import {
  checkedProducerSettings,
  clientNameOf,
  producerOptionEntries,
  type ProducerSource,
} from '../client/producer-settings.js';
export type { ProducerSource } from '../client/producer-settings.js';
import type { ProducerOptionsSettings, PulsarClientName } from '../../pulsar/client-options.js';

export { checkDelayable, isProducer } from '../options/consumer-options.js';

const SERVER_ONLY_OPTIONS = {
  /**
   * The registration this server serves: it runs only the handlers declared `@BabelHandler(urn, { connection })`
   * with this name (none: those without a connection).
   */
  name: nonBlank(),
  /** A native `pulsar-client` Client or a PulsarWebSocketClient (required); the server never closes it. */
  client: option<PulsarClientLike, PulsarClientLike>((value, name, raise) => {
    const client = value as Partial<PulsarClientLike> | undefined;
    if (!client || typeof client.subscribe !== 'function' || typeof client.createProducer !== 'function')
      return raise(`${name} must be a Pulsar client (pulsar-client Client or PulsarWebSocketClient)`, 'type');
    return value as PulsarClientLike;
  }),
  /** Supplies retry and dead-letter producers instead of the server creating them (the module's pool). */
  producers: passThrough<ProducerSource>(),
  /** Every handler skips a message whose `meta.id` was already handled (docs/idempotency.md). */
  idempotency: option<IdempotencyOptions>((value, name, raise) => {
    if (value !== undefined) checkIdempotencyOptions(value, name, raise);
    return value as IdempotencyOptions | undefined;
  }),
  /**
   * Inbox handlers run in a PostgreSQL transaction that first records their message id (docs/exactly-once.md#the-inbox):
   * `{ store, every? }`; `every: true` makes every handler one, else those with `inbox: true`.
   * @defaultValue none
   */
  inbox: option<InboxOptions>((value, name, raise) => checkInboxOptions(value, name, raise)),
  /** Decrypts the `x-gdpr-sensitive` fields of handlers' schemas before they run (docs/schemas.md). */
  cipher: passThrough<FieldCipher>(),
  /**
   * Where the consumers log.
   * @defaultValue a Nest Logger named BabelPulsarServer
   */
  logger: option<ConsumerLogger>((value, name, raise) => {
    if (value === undefined) return undefined;
    const logger = value as Partial<ConsumerLogger> | null;
    if (
      !logger ||
      typeof logger.log !== 'function' ||
      typeof logger.warn !== 'function' ||
      typeof logger.error !== 'function'
    )
      return raise(`${name} must have log, warn and error methods (a Nest Logger works)`, 'type');
    return value as ConsumerLogger;
  }),
  /**
   * OpenTelemetry, when `@opentelemetry/api` is installed: `process <urn>` spans (`tracing`) and consumer
   * metrics (`metrics`). `false` or `{ tracing: false }` / `{ metrics: false }` turns them off.
   * @defaultValue both on
   */
  telemetry: option<TelemetryOption, ResolvedTelemetry>((value, name, raise) => resolveTelemetry(value, name, raise)),
  /**
   * `false`: no start-up warnings about the wiring (a pattern of `@EventPattern` / `@MessagePattern` on this
   * server, a topic consumed through several subscriptions).
   * @defaultValue `true`
   */
  startupWarnings: flag(true),
  /**
   * `'required'`: listen() fails when the broker does not answer. `'optional'`: the app starts anyway, the
   * server reports `disconnected` (health down) and subscribes once the broker answers, with one log line when
   * it starts waiting and one when it is connected. A subscription first made then starts at `Earliest` (unless
   * `subscriptionInitialPosition` says otherwise), so what was published before it is handled.
   * @defaultValue `'required'`
   */
  brokerAtStart: oneOf(['required', 'optional'], 'required'),
  /** Called for every failure: a gate rejection, a poison message, an unknown URN, a failed handler or write. */
  onError: callback<NonNullable<BabelQueueHooks['onError']>>(),
  /** No handler for the URN: when set, it runs and the message is acknowledged (a throw counts as a failure). */
  onUnknownUrn: callback<NonNullable<BabelQueueHooks['onUnknownUrn']>>(),
  /** `bq-job` and the body's `job` differ (the property routes). */
  onRoutingMismatch: callback<NonNullable<BabelQueueHooks['onRoutingMismatch']>>(),
  /** After a record was written to the dead-letter topic. */
  onDeadLetter: callback<NonNullable<BabelQueueHooks['onDeadLetter']>>(),
};

const { client, ...serverOnly } = { ...SERVER_ONLY_OPTIONS, ...producerOptionEntries };
/** Every option of `new BabelPulsarServer(options)`, each declared once (the client is checked first). */
export const serverOptionTable = { client, ...serverConsumerOptions, ...serverOnly };

/** The options of `new BabelPulsarServer(options)`. */
export interface BabelPulsarServerOptions extends OptionsInput<typeof serverOptionTable> {
  client: PulsarClientLike;
  topics: string | string[];
}

/** What the server reads: every option validated, defaults applied, the producer settings checked against the client. */
export type ResolvedServerOptions = ResolvedOptions<typeof serverOptionTable> & {
  producerSettings: ProducerOptionsSettings;
};

const { client: _client, name: _name, producers: _producers, ...settingsAndHooks } = serverOptionTable;
const { onError: _e, onUnknownUrn: _u, onRoutingMismatch: _r, onDeadLetter: _d, ...settingsTable } = settingsAndHooks;
/** The server's settings a registration decides: all but its name, client, producers and hooks. */
export const serverSettingsTable = settingsTable;

/** The server's settings resolved from the settings table (what the module decides for its server). */
export type ResolvedServerSettings = ResolvedOptions<typeof serverSettingsTable> & {
  producerSettings: ProducerOptionsSettings;
};

/** The rules between server settings, once each is valid on its own; `client`: what they will run on, when known. */
function checkServerSettings<T extends ResolvedOptions<typeof serverSettingsTable>>(
  resolved: T,
  client: PulsarClientName | undefined,
  where: string,
  raise: RaiseOptionError,
): T & { producerSettings: ProducerOptionsSettings } {
  checkConsumerCombination(resolved, where, raise);
  return {
    ...resolved,
    consumerOptions: checkConsumerOptionsFor(resolved.consumerOptions, client, `${where}.consumerOptions`, raise),
    producerSettings: checkedProducerSettings(client, resolved, `${where}.`, raise),
  };
}

/** The server settings of `input` (given keys), defaults from the table, each rule checked with `raise`. */
export function resolveServerSettings(
  input: Record<string, unknown>,
  client: PulsarClientName | undefined,
  where: string,
  raise: RaiseOptionError,
): ResolvedServerSettings {
  return checkServerSettings(resolveOptions(serverSettingsTable, input, where, raise), client, where, raise);
}

/** Validates server options at construction, with errors naming the option and what is allowed. */
export function resolveServerOptions(options: BabelPulsarServerOptions): ResolvedServerOptions {
  if (!options || typeof options !== 'object') throw new TypeError('BabelPulsarServer needs an options object');
  const raise = raiseStandardError;
  const resolved = resolveOptions(serverOptionTable, options as unknown as Record<string, unknown>, 'options', raise);
  return checkServerSettings(resolved, clientNameOf(resolved.client), 'options', raise);
}

/** The consumer's hooks from the server's settings. */
export function consumerHooksOf(settings: ResolvedServerOptions): BabelQueueHooks {
  const { onError, onUnknownUrn, onRoutingMismatch, onDeadLetter } = settings;
  return {
    // Every failure is logged by the consumer: one line per failed delivery (URN, id, attempt, outcome), and
    // a write the broker refuses once per message (repeats at debug), so the hook only forwards.
    onError: (error, envelope, message) => onError?.(error, envelope, message),
    ...(onUnknownUrn && { onUnknownUrn }),
    ...(onRoutingMismatch && { onRoutingMismatch }),
    ...(onDeadLetter && { onDeadLetter }),
  };
}
