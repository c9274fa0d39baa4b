import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { BabelQueueError } from '../../envelope/index.js';
import { isMessageData as isData } from '../../envelope/producer-checks.js';
import { createPulsarClient } from '../../pulsar/client-factory.js';
import type { ProducerOptionsSettings } from '../../pulsar/client-options.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { loadOpenTelemetry, startPublishSpan } from '../../otel/tracing.js';
import { BabelProducerPool, type PooledProducerState } from './producer-pool.js';
import type { ProducerSource } from './producer-settings.js';
import { PublishError } from './publish-error.js';
import { withinPublishTimeout } from './publish-timeout.js';
import { ClientEvents, type BabelClientEvents } from './client-events.js';
import { ClientStatus } from './client-status.js';
import { InFlightPublishes } from './in-flight.js';
import { ReplyInbox, replyTopicName, type ReplyInboxStats } from './reply-inbox.js';
import { requestReply, type RequestOptions } from './request.js';
import { publishPayload } from '../../schema/message-payload.js';
import { checkPayloadSchema } from '../../schema/payload-schema.js';
import { isUrnContract, type UrnContract } from '../../schema/urn-contract.js';
import type { OptionsInput } from '../../options/option-table.js';
import { checkTimeout, type clientOptionTable, describe } from './client-options.js';
import { checkedClientSettings } from './client-settings.js';
import { clientSchedules } from './client-schedules.js';
import type { ScheduledMessage, ScheduleHandle, ScheduleListQuery, ScheduleOptions } from '../../schedule/index.js';

/** The options of `new BabelPulsarClient(options)`. */
export type BabelPulsarClientOptions = OptionsInput<typeof clientOptionTable>;

export { DEFAULT_PUBLISH_TIMEOUT_MS } from './client-options.js';
export type { RequestOptions } from './request.js';
export type { BabelClientEvents } from './client-events.js';
export type { BabelClientStatus } from './client-status.js';
export type { PublishOptions } from './publish-message.js';
import { preparePublish, type PublishOptions } from './publish-message.js';

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
  private readonly events = new ClientEvents();
  private readonly defaultTopic: string | undefined;
  private readonly tracing: boolean;
  private readonly publishTimeoutMs: number;
  private readonly logger = new Logger(BabelPulsarClient.name);
  private client: PulsarClientLike | undefined;
  private connecting: Promise<PulsarClientLike> | null = null;
  private ownPool: BabelProducerPool | undefined;
  private readonly producerSettings: ProducerOptionsSettings;
  private readonly inFlight = new InFlightPublishes();
  private readonly clientStatus = new ClientStatus((status) => this._status$.next(status));
  private closing: Promise<void> | null = null;
  private readonly requestTimeoutMs: number;
  private readonly replyNamespace: string;
  /** Where the replies of send() arrive, opened on the first send(). */
  private inbox: ReplyInbox | undefined;

  constructor(private readonly options: BabelPulsarClientOptions) {
    super();
    const settings = checkedClientSettings(options);
    if (settings.topic !== undefined) this.defaultTopic = settings.topic;
    this.producerSettings = settings.producerSettings;
    this.tracing = settings.tracing;
    this.publishTimeoutMs = settings.publishTimeoutMs;
    this.requestTimeoutMs = settings.requestTimeoutMs;
    this.replyNamespace = settings.replyNamespace;
    this.client = settings.client;
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
    this.clientStatus.set('connected');
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
      return this.inFlight.track(
        this.publishEnvelope(first.urn, second, { ...options, ...(schema !== undefined && { schema }) }),
      );
    }
    return this.inFlight.track(this.publishEnvelope(first as string, second, options));
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
        publish: (urn, given, publish) => this.inFlight.track(this.publishEnvelope(urn, given, publish)),
      },
      pattern,
      data,
      options,
    );
  }

  /**
   * Stores a scheduled message in the module's outbox (docs/scheduling.md): one-off (`{ at }` or `{ delay }`) or
   * recurring (`{ cron, tz, missed }`), published through the outbox relay when due. The same `id` again is the
   * same schedule. Needs `outbox: { pool, schedules: true }` in the module; to schedule inside your own
   * transaction, use `BabelOutbox.schedule(transaction, …)`.
   */
  schedule(urn: string, data: object, options: ScheduleOptions): Promise<ScheduleHandle>;
  /** Schedules through a typed contract (defineUrn): `data` must be of its payload type; its schema is validated. */
  schedule<T extends object>(
    contract: UrnContract<T>,
    data: NoInfer<T>,
    options: ScheduleOptions,
  ): Promise<ScheduleHandle>;
  async schedule(urn: string | UrnContract<object>, data: object, options: ScheduleOptions): Promise<ScheduleHandle> {
    return clientSchedules(this, 'schedule').schedule(urn, data, options);
  }

  /** Cancels a pending schedule: true when it was pending (it never fires again), false otherwise. */
  async cancelSchedule(id: string): Promise<boolean> {
    return clientSchedules(this, 'cancelSchedule').cancel(id);
  }

  /** One schedule, whatever its state; null when there is none with this id. */
  async getSchedule(id: string): Promise<ScheduledMessage | null> {
    return clientSchedules(this, 'getSchedule').get(id);
  }

  /** Pending schedules, soonest first: `{ urn?, before?, limit? }` (default limit 100). */
  async listSchedules(query: ScheduleListQuery = {}): Promise<ScheduledMessage[]> {
    return clientSchedules(this, 'listSchedules').list(query);
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
      await this.inFlight.settled();
      await this.inbox?.close();
      await this.ownPool?.close();
      if (this.options.serviceUrl !== undefined) {
        const client = this.client ?? (await this.connecting?.catch(() => undefined));
        await client?.close();
      }
      this.clientStatus.set('closed');
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
    this.events.on(event, callback);
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
      error: (error: unknown) => this.events.emitFailed(this.logger, pattern, error),
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
    return (await this.inFlight.track(this.publishEnvelope(pattern, data, options))) as T;
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
      await withinPublishTimeout(
        { topic, id, timeoutMs, clientOptions: this.options, events: this.events },
        async () => {
          await this.ensureClient();
          const producer = await this.producers().producerFor(topic);
          try {
            await producer.send(message);
          } catch (error) {
            // The id travels with the error: a retry with { id } cannot create a second message.
            const failure = new PublishError(error, id, topic);
            this.events.raise(failure);
            throw failure;
          }
        },
      );
    } catch (error) {
      trace?.end(id, error);
      throw error;
    }
    trace?.end(id);
    this.clientStatus.set('connected');
    return id;
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
        this.clientStatus.set('disconnected');
        throw error;
      },
    );
    return this.connecting;
  }

  private assertOpen(): void {
    if (this.closing) {
      throw new BabelQueueError(
        'BabelPulsarClient is closed (the application is shutting down or close() was called): nothing was published',
      );
    }
  }
}
