import { BabelQueueError } from '../../envelope/index.js';
import { errorText } from '../../envelope/error-text.js';
import { option, raiseLibraryError, type RaiseOptionError } from '../../options/option-table.js';
import { passThrough } from '../../options/validators.js';
import type { PulsarAuthOptions } from '../../pulsar/client-factory.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { parseTopic } from '../../pulsar/topic-name.js';
import { resolveTelemetry, type ResolvedTelemetry, type TelemetryOption } from '../../otel/telemetry-options.js';
import type { FieldCipher } from '../../schema/gdpr.js';
import type { ProducerSource } from './producer-settings.js';
import { producerOptionEntries } from './producer-settings.js';

/** The default of `publishTimeoutMs`: long enough for a broker that is busy, short enough for one that is down. */
export const DEFAULT_PUBLISH_TIMEOUT_MS = 10_000;

/** The default of `requestTimeoutMs`: how long send() waits for a reply. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** BabelPulsarClient's errors for its options and publish arguments. */
export const raiseClientError: RaiseOptionError = raiseLibraryError;

/** A value as the client's errors show it: `string "x"`, `a Date`, `nothing`. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `a ${(value as object).constructor?.name ?? 'non-plain object'}`;
  return `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
}

export function checkTopic(topic: unknown, name: string): string {
  if (typeof topic !== 'string' || topic.trim() === '') {
    throw new BabelQueueError(
      `${name} must be a non-blank topic name (e.g. "orders" or "persistent://public/default/orders"), got ${describe(topic)}`,
    );
  }
  try {
    parseTopic(topic.trim());
  } catch (error) {
    throw new BabelQueueError(`${name}: ${errorText(error)}`, { cause: error });
  }
  return topic.trim();
}

/** A time-out in whole ms; 0 = wait as long as the Pulsar client does. */
export function checkTimeout(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new BabelQueueError(
      `${name} must be a whole number of milliseconds >= 0 (0 = no time-out), got ${describe(value)}`,
    );
  }
  return value;
}

/** Every option of `new BabelPulsarClient(options)`, each declared once. */
export const clientOptionTable = {
  /**
   * A ready Pulsar client (native `pulsar-client` Client or PulsarWebSocketClient). This BabelPulsarClient
   * never closes it. Give either `client` or `serviceUrl`.
   */
  client: option<PulsarClientLike>((value, name, raise) => {
    if (value === undefined) return undefined;
    if (typeof value !== 'object' || value === null || typeof (value as PulsarClientLike).createProducer !== 'function')
      return raise(`${name} must be a Pulsar client (pulsar-client Client or PulsarWebSocketClient)`, 'type');
    return value as PulsarClientLike;
  }),
  /**
   * Creates a client of its own on connect() (closed by close()): pulsar:// and pulsar+ssl:// use the native
   * `pulsar-client` package, http(s):// and ws(s):// the built-in WebSocket client.
   */
  serviceUrl: passThrough<string>(),
  /** Token authentication for the client created from `serviceUrl`. */
  auth: passThrough<PulsarAuthOptions>(),
  /** Extra options for the client created from `serviceUrl`. */
  clientOptions: passThrough<Record<string, unknown>>(),
  /** Default topic of publish() and the topic of emit(). */
  topic: option<string>((value, name) => (value === undefined ? undefined : checkTopic(value, name))),
  /**
   * Where producers come from when someone else owns them (BabelQueueModule shares its pool); such a source is
   * never closed here. By default the client keeps a pool of its own and closes it on close().
   */
  producers: option<ProducerSource>((value, name, raise) => {
    if (value !== undefined && typeof (value as Partial<ProducerSource> | null)?.producerFor !== 'function')
      return raise(`${name} must have a producerFor(topic) method`, 'type');
    return value as ProducerSource | undefined;
  }),
  /**
   * OpenTelemetry, when `@opentelemetry/api` is installed: `tracing` starts a `publish <urn>` span and sends its
   * `traceparent`; `false` or `{ tracing: false }` turns that off. (`metrics` is accepted for symmetry with the
   * server; the client records none.)
   * @defaultValue both on
   */
  telemetry: option<TelemetryOption, ResolvedTelemetry>((value, name, raise) => resolveTelemetry(value, name, raise)),
  /**
   * How long a publish waits for the broker (client creation, producer and send) before it rejects with a
   * PublishError naming the topic; per call: `publish(urn, data, { timeoutMs })`.
   * @defaultValue `10000`
   */
  publishTimeoutMs: option<number, number>((value, name) =>
    value === undefined ? DEFAULT_PUBLISH_TIMEOUT_MS : checkTimeout(value, name),
  ),
  /**
   * How long `send()` waits for its reply before its Observable errors with a RequestTimeoutError; per call:
   * `send(urn, data, { timeoutMs })`. Must be above 0.
   * @defaultValue `30000`
   */
  requestTimeoutMs: option<number, number>((value, name, raise) => {
    if (value === undefined) return DEFAULT_REQUEST_TIMEOUT_MS;
    const checked = checkTimeout(value, name);
    return checked > 0
      ? checked
      : raise(`${name} must be above 0 (a request without a time-out could wait forever)`, 'range');
  }),
  /**
   * The namespace of this client's reply topic (`<namespace>/bq-replies-<uuid>`, one per client instance), e.g.
   * `public/default`. Default: the namespace of `topic`, else `public/default`.
   */
  replyNamespace: option<string>((value, name, raise) => {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^[^/\s]+\/[^/\s]+$/.test(value))
      return raise(`${name} must be "tenant/namespace", got ${describe(value)}`, 'type');
    return value;
  }),
  /** Encrypts the `x-gdpr-sensitive` fields of a publish's schema (docs/schemas.md). */
  cipher: passThrough<FieldCipher>(),
  ...producerOptionEntries,
};
