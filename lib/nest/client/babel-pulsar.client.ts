import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { EventEmitter } from 'node:events';
import { Observable } from 'rxjs';
import { BabelQueueError } from '../../envelope/index.js';
import { isMessageData as isData } from '../../envelope/producer-checks.js';
import { clientKindFor, createPulsarClient } from '../../pulsar/client-factory.js';
import type { ProducerOptionsSettings } from '../../pulsar/client-options.js';
import { checkedProducerSettings } from './producer-settings.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { loadOpenTelemetry, startPublishSpan } from '../../otel/tracing.js';
import { BabelProducerPool, type PooledProducerState } from './producer-pool.js';
import type { ProducerSource } from '../server/server-options.js';
import { PublishError } from './publish-error.js';
import { ReplyInbox, replyNamespaceOf, replyTopicName, type ReplyInboxStats } from './reply-inbox.js';
import { requestReply, type RequestOptions } from './request.js';
import { publishPayload } from '../../schema/message-payload.js';
import { checkPayloadSchema } from '../../schema/payload-schema.js';
import { isUrnContract, type UrnContract } from '../../schema/urn-contract.js';
import { resolveOptions, type OptionsInput } from '../../options/option-table.js';
import { checkTimeout, clientOptionTable, describe, raiseClientError } from './client-options.js';

/** The options of `new BabelPulsarClient(options)`. */
export type BabelPulsarClientOptions = OptionsInput<typeof clientOptionTable>;

export { DEFAULT_PUBLISH_TIMEOUT_MS } from './client-options.js';
export type { RequestOptions } from './request.js';
export type { PublishOptions } from './publish-message.js';
import { preparePublish, type PublishOptions } from './publish-message.js';

/** The client kind a service URL selects; undefined for a URL that connect() will refuse with its own error. */
function kindOf(serviceUrl: string | undefined): string | undefined {
  try {
    return clientKindFor(serviceUrl);
  } catch {
    return undefined;
  }
}

export type BabelClientStatus = 'connected' | 'disconnected' | 'closed';

/** Events of `client.on(...)`. */
export type BabelClientEvents = {
  /** A publish the broker did not accept (the publish call rejects with the same error). */
  error: (error: Error) => void;
};

const PACKET_UNSUPPORTED =
  "BabelPulsarClient does not take Nest's packet form of publish(): use send(urn, data) for a request, " +
  'emit(urn, data) or publish(urn, data, options) for a one-way message';

/**
 * Publishes BabelQueue envelopes to Pulsar. A Nest ClientProxy: `emit(urn, data)` publishes to the default
 * topic; `publish(urn, data, options)` resolves to the envelope's `meta.id` once the broker accepted it.
 *
 * Usable without the module: `new BabelPulsarClient({ client, topic })` or `new BabelPulsarClient({ serviceUrl, topic })`
 * (also as a `ClientsModule` `customClass`).
 */
// Status stays `string` in the base type so that the class is a `Type<ClientProxy>` (a ClientsModule customClass);
// the values are BabelClientStatus.
@Injectable()
export class BabelPulsarClient extends ClientProxy<BabelClientEvents> implements OnApplicationShutdown {
  private readonly events = new EventEmitter();
  private readonly defaultTopic: string | undefined;
  private readonly tracing: boolean;
  private readonly publishTimeoutMs: number;
  private readonly logger = new Logger(BabelPulsarClient.name);
  /** Failures already raised on the `error` event (emit() must not raise one twice). */
  private readonly reported = new WeakSet<object>();
  private client: PulsarClientLike | undefined;
  private connecting: Promise<PulsarClientLike> | null = null;
  private ownPool: BabelProducerPool | undefined;
  private readonly producerSettings: ProducerOptionsSettings;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closing: Promise<void> | null = null;
  private readonly requestTimeoutMs: number;
  private readonly replyNamespace: string;
  /** Where the replies of send() arrive, opened on the first send(). */
  private inbox: ReplyInbox | undefined;

  constructor(private readonly options: BabelPulsarClientOptions) {
    super();
    if (!options || typeof options !== 'object')
      throw new BabelQueueError('BabelPulsarClient needs options: { client, topic } or { serviceUrl, topic }');
    const {
      client,
      serviceUrl,
      topic,
      telemetry,
      publishTimeoutMs,
      requestTimeoutMs,
      replyNamespace,
      producers,
      producerOptions,
      producerOptionsByTopic,
    } = resolveOptions(clientOptionTable, options as Record<string, unknown>, 'options', raiseClientError);
    if (client !== undefined && serviceUrl !== undefined) {
      throw new BabelQueueError('BabelPulsarClient takes either client or serviceUrl, not both');
    }
    if (client === undefined && serviceUrl === undefined) {
      throw new BabelQueueError('BabelPulsarClient needs a client (a ready Pulsar client) or a serviceUrl');
    }
    if (topic !== undefined) this.defaultTopic = topic;
    if (producers !== undefined && (producerOptions ?? producerOptionsByTopic) !== undefined) {
      throw new BabelQueueError(
        'options.producerOptions and options.producerOptionsByTopic apply to the producers this client creates; ' +
          'with options.producers, give them to that source (e.g. new BabelProducerPool(client, { producerOptions }))',
      );
    }
    // Checked now (against the client when it is given), so that a setting the client cannot honour fails here.
    this.producerSettings = checkedProducerSettings(
      client ?? kindOf(serviceUrl),
      { producerOptions, producerOptionsByTopic },
      'options.',
      raiseClientError,
    );
    this.tracing = telemetry.tracing;
    this.publishTimeoutMs = publishTimeoutMs;
    this.requestTimeoutMs = requestTimeoutMs;
    this.replyNamespace = replyNamespace ?? replyNamespaceOf(topic);
    this.client = client;
    this.events.on('error', () => undefined); // an 'error' without listeners must not throw
    this.initializeSerializer({});
    this.initializeDeserializer({});
  }

  /** The default topic of publish() and emit(), if any. */
  get topic(): string | undefined {
    return this.defaultTopic;
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.closing !== null;
  }

  /**
   * Makes sure the Pulsar client exists (creating it from `serviceUrl`) and, when a default topic is set, that its
   * producer is ready, so that a broker problem shows at start-up rather than on the first publish.
   */
  async connect(): Promise<PulsarClientLike> {
    this.assertOpen();
    const client = await this.ensureClient();
    if (this.defaultTopic !== undefined) await this.producers().producerFor(this.defaultTopic);
    this.setStatus('connected');
    return client;
  }

  /**
   * Publishes one envelope and resolves to its `meta.id` once the broker accepted it. Rejects with a
   * BabelQueueError, before anything is sent, on a URN that is blank or not `urn:…`, data that is not an object
   * or that JSON would change (NaN, Infinity, undefined, functions, at any depth), an invalid delay, topic or
   * header, or when no topic is given and there is no default topic.
   */
  publish(urn: string, data: object, options?: PublishOptions): Promise<string>;
  /** Publishes through a typed contract (defineUrn): `data` must be of its payload type; its schema is validated. */
  publish<T extends object>(contract: UrnContract<T>, data: NoInfer<T>, options?: PublishOptions): Promise<string>;
  /** @internal Nest's request/response path: not supported by this transport (see send()). */
  publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void;
  publish(
    first: string | ReadPacket | UrnContract<object>,
    second: object | ((packet: WritePacket) => void),
    options: PublishOptions = {},
  ): Promise<string> | (() => void) {
    if (typeof second === 'function' && typeof first === 'object' && first !== null && !isUrnContract(first)) {
      (second as (packet: WritePacket) => void)({ err: new BabelQueueError(PACKET_UNSUPPORTED), isDisposed: true });
      return () => undefined;
    }
    if (isUrnContract(first)) {
      const schema = options?.schema ?? first.schema;
      return this.track(
        this.publishEnvelope(first.urn, second, { ...options, ...(schema !== undefined && { schema }) }),
      );
    }
    return this.track(this.publishEnvelope(first as string, second, options));
  }

  /**
   * Request/response (docs/request-response.md): publishes a request (an envelope with `bq-reply-to` and
   * `bq-correlation-id`) and emits the handler's return value, then completes; a handler that returned nothing
   * completes without a value. Errors with a RequestFailedError (the handler's error text and class) when the
   * request is dead-lettered, a RequestTimeoutError after `timeoutMs`, or the publish's own error. Cold: nothing is
   * sent until it is subscribed; unsubscribing stops the wait (a reply that comes later is dropped and counted).
   */
  override send<TResult = unknown, TInput = unknown>(
    pattern: unknown,
    data: TInput,
    options?: RequestOptions,
  ): Observable<TResult> {
    return requestReply<TResult>(
      {
        assertOpen: () => this.assertOpen(),
        inbox: () => this.replies(),
        defaultTimeoutMs: this.requestTimeoutMs,
        publish: (urn, given, publish) => this.track(this.publishEnvelope(urn, given, publish)),
      },
      pattern,
      data,
      options,
    );
  }

  /** What this client's reply inbox counted (replies delivered, late replies dropped, calls waiting). */
  get replyStats(): ReplyInboxStats {
    return this.inbox?.stats ?? { waiting: 0, delivered: 0, late: 0, unreadable: 0 };
  }

  /** This client's reply topic (created on the first send()); undefined before. */
  get replyTopic(): string | undefined {
    return this.inbox?.topic;
  }

  /** Stops accepting publishes, waits for those under way, then closes the producers and client it owns. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.inFlight]);
      await this.inbox?.close();
      await this.ownPool?.close();
      if (this.options.serviceUrl !== undefined) {
        const client = this.client ?? (await this.connecting?.catch(() => undefined));
        await client?.close();
      }
      this.setStatus('closed');
    })();
    return this.closing;
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** The Pulsar client (throws before connect() when it is created from serviceUrl). */
  unwrap<T = PulsarClientLike>(): T {
    if (!this.client)
      throw new BabelQueueError('BabelPulsarClient is not connected yet: call connect() (or publish) first');
    return this.client as T;
  }

  override on<K extends keyof BabelClientEvents>(event: K, callback: BabelClientEvents[K]): void {
    this.events.on(event, callback as (...args: unknown[]) => void);
  }

  /** Producers of this client's own pool (empty when the producers come from elsewhere). */
  describeProducers(): PooledProducerState[] {
    return this.ownPool?.describe() ?? [];
  }

  /**
   * emit(urn, data): publishes to the default topic; the Observable emits the message id and completes. Nobody
   * may subscribe to it, so a failure (bad data, no producer, a refused send) is also logged once and raised on
   * the `error` event.
   */
  override emit<TResult = string, TInput = unknown>(pattern: unknown, data: TInput): Observable<TResult> {
    const source = super.emit<TResult, TInput>(pattern, data);
    source.subscribe({
      error: (error: unknown) => {
        const failure = error instanceof Error ? error : new BabelQueueError(String(error));
        this.logger.error(`emit(${JSON.stringify(pattern) ?? String(pattern)}) failed: ${failure.message}`);
        this.raise(failure);
      },
    });
    return source;
  }

  /** The packet emit() hands over (after connect()). */
  protected async dispatchEvent<T = string>(packet: ReadPacket): Promise<T> {
    const { pattern, data } = packet;
    if (typeof pattern !== 'string') {
      throw new BabelQueueError(`emit() takes a URN string as its pattern, got ${describe(pattern)}`);
    }
    // Nest 12: a dispatch hook (setOnDispatchHook) may attach metadata; it travels as extra properties.
    const metadata = (packet as { metadata?: Record<string, string> }).metadata;
    const options: PublishOptions = metadata && typeof metadata === 'object' ? { headers: { ...metadata } } : {};
    return (await this.track(this.publishEnvelope(pattern, data, options))) as T;
  }

  private async publishEnvelope(urn: string, given: unknown, options: PublishOptions): Promise<string> {
    this.assertOpen();
    const data = this.checkedData(urn, given, options);
    // OpenTelemetry (an optional peer) is imported once; without it, or with tracing off, nothing is traced and
    // no trace header is added (trace_id is then the caller's or a new UUID, never the active span's).
    if (this.tracing) await loadOpenTelemetry();
    const topicName = options?.topic ?? this.defaultTopic;
    const trace =
      this.tracing && typeof urn === 'string' && urn.trim() !== '' && typeof topicName === 'string' && isData(data)
        ? startPublishSpan(urn, topicName, options?.traceId)
        : undefined;
    let prepared: ReturnType<typeof preparePublish>;
    try {
      prepared = preparePublish(this.defaultTopic, urn, data, options, trace);
    } catch (error) {
      trace?.end(undefined, error);
      throw error;
    }
    const { topic, message, id } = prepared;
    const timeoutMs =
      options.timeoutMs === undefined ? this.publishTimeoutMs : checkTimeout(options.timeoutMs, 'options.timeoutMs');
    try {
      await this.withinTimeout(topic, id, timeoutMs, async () => {
        await this.ensureClient();
        const producer = await this.producers().producerFor(topic);
        try {
          await producer.send(message);
        } catch (error) {
          // The id travels with the error: a retry with { id } cannot create a second message.
          const failure = new PublishError(error, id, topic);
          this.raise(failure);
          throw failure;
        }
      });
    } catch (error) {
      trace?.end(id, error);
      throw error;
    }
    trace?.end(id);
    this.setStatus('connected');
    return id;
  }

  /** Runs the broker side of a publish; past `timeoutMs` it rejects with a PublishError saying what to check. */
  private async withinTimeout(topic: string, id: string, timeoutMs: number, work: () => Promise<void>): Promise<void> {
    if (timeoutMs === 0) return work();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const where = this.options.serviceUrl === undefined ? '' : ` at ${this.options.serviceUrl}`;
        const cause = new BabelQueueError(
          `publish to ${topic} got no answer from the broker within ${timeoutMs} ms (TimeOut): is the broker running ` +
            `and reachable${where}, may this client produce to the topic, and does its namespace exist? ` +
            '(publishTimeoutMs / publish(..., { timeoutMs }) sets the wait)',
        );
        const failure = new PublishError(cause, id, topic);
        this.raise(failure);
        reject(failure);
      }, timeoutMs);
      timer.unref?.();
    });
    const running = work();
    running.catch(() => undefined); // a late failure after the time-out was already reported
    try {
      await Promise.race([running, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private raise(failure: Error): void {
    if (this.reported.has(failure)) return;
    this.reported.add(failure);
    this.events.emit('error', failure);
  }

  /** The data to send: validated against the publish's schema and its sensitive fields encrypted, if it has one. */
  private checkedData(urn: unknown, data: unknown, options: PublishOptions): unknown {
    if (options?.schema === undefined || typeof urn !== 'string' || urn.trim() === '' || !isData(data)) return data;
    const schema = checkPayloadSchema(options.schema, 'options.schema');
    return publishPayload(urn.trim(), data, schema, this.options.cipher);
  }

  /** Everything that can be checked before anything is sent. */
  private replies(): ReplyInbox {
    this.inbox ??= new ReplyInbox(replyTopicName(this.replyNamespace), () => this.ensureClient(), this.logger);
    return this.inbox;
  }

  private producers(): ProducerSource {
    if (this.options.producers) return this.options.producers;
    if (!this.client) throw new BabelQueueError('BabelPulsarClient has no Pulsar client yet');
    this.ownPool ??= new BabelProducerPool(this.client, this.producerSettings);
    return this.ownPool;
  }

  private ensureClient(): Promise<PulsarClientLike> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= createPulsarClient({
      serviceUrl: this.options.serviceUrl!,
      ...(this.options.auth && { auth: this.options.auth }),
      ...(this.options.clientOptions && { clientOptions: this.options.clientOptions }),
    }).then(
      ({ client }) => {
        this.client = client;
        return client;
      },
      (error: unknown) => {
        this.connecting = null; // the next call tries again
        this.setStatus('disconnected');
        throw error;
      },
    );
    return this.connecting;
  }

  /** The last status told to `status`; each publish confirms 'connected', which is told only when it changes. */
  private lastStatus: BabelClientStatus | null = null;

  private setStatus(status: BabelClientStatus): void {
    if (status === this.lastStatus) return;
    this.lastStatus = status;
    this._status$.next(status);
  }

  private assertOpen(): void {
    if (this.closing) {
      throw new BabelQueueError(
        'BabelPulsarClient is closed (the application is shutting down or close() was called): nothing was published',
      );
    }
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    const forget = () => this.inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }
}
