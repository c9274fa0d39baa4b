/**
 * Wraps the native `pulsar-client` so that it behaves like the WebSocket client wherever this library depends
 * on a behaviour: plain-object property maps, message ids in one text form, errors that name the service URL
 * and topic (created in this realm, so `instanceof Error` holds everywhere), and a close that never waits for
 * a receive in flight.
 *
 * The user keeps the raw client (`unwrap()`, `BABEL_PULSAR_CLIENT`); only the library's own calls go through
 * the adapter, which `toLibraryClient` (library-client.ts) applies wherever a client enters the library.
 */
import fs from 'node:fs';
import { BabelQueueError } from '../../envelope/index.js';
import { LIBRARY_CLIENT, type LibraryClient, type PushResult } from '../client-types.js';
import type {
  PulsarConsumer,
  PulsarConsumerConfig,
  PulsarMessage,
  PulsarMessageId,
  PulsarProducer,
  PulsarProducerConfig,
  PulsarProducerMessage,
} from '../client-types.js';
import { firstHostPort, probeTls, type TlsProbeTarget } from '../tls.js';
import { nativeProducerConfig, refuseUnsupported } from './native-options.js';
import type { PushRoom } from '../push-room.js';
import { startReceivePump, type PumpBatch, type ReceivePump } from '../receive-pump.js';

/** What the adapter needs of a raw native message (the package's Message class): the library's message shape. */
type NativeMessage = PulsarMessage;

interface NativeConsumer {
  receive(timeoutMs?: number): Promise<NativeMessage>;
  batchReceive(): Promise<NativeMessage[]>;
  acknowledge(message: NativeMessage): Promise<null>;
  negativeAcknowledge(message: NativeMessage): void;
  close(): Promise<unknown>;
  unsubscribe(): Promise<unknown>;
  isConnected(): boolean;
}

/** The native consumer config: ours, plus the push listener (called on the client's listener thread). */
type NativeConsumerConfig = PulsarConsumerConfig & {
  listener?: (message: NativeMessage, consumer: unknown) => PushResult;
  batchReceivePolicy?: { maxNumMessages: number; maxNumBytes: number; timeoutMs: number };
};

/** The addon's receiver queue when none is given (index.d.ts of pulsar-client). */
const NATIVE_RECEIVER_QUEUE = 1000;
/**
 * A backlog is taken up to this many messages at a time: one promise from the addon instead of one per message.
 * Never more than half the receiver queue, the share libpulsar asks the broker to refill at once, so that a full
 * batch does not wait for a refill.
 */
const RECEIVE_BATCH = 32;
/** How long a batch that is not full waits for the rest: the most a message waits for its batch. */
const RECEIVE_BATCH_WAIT_MS = 2;

/** The native producer settings the adapter fixes, on top of the library's own (index.d.ts of pulsar-client). */
interface NativeProducerConfig extends PulsarProducerConfig {
  hashingScheme?: 'Murmur3_32Hash' | 'BoostHash' | 'JavaStringHash';
  batchingType?: 'DefaultBatching' | 'KeyBasedBatching';
}

/**
 * How the library's producers route on partitioned topics, the same as the WebSocket API's (the broker's Java
 * producer) and the Java and Go SDKs': a key goes to partition JavaStringHash(key) % partitions whoever
 * publishes it, so a retry copy lands on its original's partition; messages without a key are spread round
 * robin (the native default would pin them to one partition).
 *
 * Each message is its own entry unless `batchingEnabled: true` is given, as through the WebSocket API: the broker
 * dispatches, acknowledges and redelivers a batch entry as a whole, so batches would send a burst of jobs to one
 * consumer, and bring back messages already handled when the rest of their batch is redelivered (a stop, a nack).
 * When batching is on, batches hold one key each, which Key_Shared needs to hand every message to its key's consumer.
 */
const PRODUCER_DEFAULTS: Omit<NativeProducerConfig, 'topic'> = {
  hashingScheme: 'JavaStringHash',
  messageRoutingMode: 'RoundRobinDistribution',
  batchingEnabled: false,
  batchingType: 'KeyBasedBatching',
};

export interface NativeClient {
  createProducer(config: NativeProducerConfig): Promise<PulsarProducer>;
  subscribe(config: NativeConsumerConfig): Promise<NativeConsumer>;
  close(): Promise<unknown>;
}

const serviceUrls = new WeakMap<object, string>();
const tlsTargets = new WeakMap<object, TlsProbeTarget>();

/** How the client checks the broker's certificate, so that a failed TLS handshake can be explained. */
export interface NativeTlsSettings {
  trustCertsFile?: string;
  validateHostname: boolean;
  allowInsecure: boolean;
}

/** Records the service URL a native client was made with (and its TLS settings), so that errors can name them. */
export function rememberServiceUrl(client: object, serviceUrl: string, tlsSettings?: NativeTlsSettings): void {
  serviceUrls.set(client, serviceUrl);
  const target = firstHostPort(serviceUrl, 6651);
  if (!/^pulsar\+ssl:/i.test(serviceUrl.trim()) || !tlsSettings || tlsSettings.allowInsecure || !target) return;
  let ca: Buffer | undefined;
  try {
    ca = tlsSettings.trustCertsFile === undefined ? undefined : fs.readFileSync(tlsSettings.trustCertsFile);
  } catch {
    return; // the client reports the unreadable file itself
  }
  tlsTargets.set(client, { ...target, ...(ca && { ca }), validateHostname: tlsSettings.validateHostname });
}

/**
 * libpulsar reports a failed TLS handshake as a bare `ConnectError` (or, as it retries, a timeout): one handshake
 * made here with the same checks names the reason (untrusted CA, hostname mismatch, expired certificate).
 */
async function withTlsReason(native: object, reason: string): Promise<string> {
  const target = tlsTargets.get(native);
  if (!target || !/ConnectError|TimeOut/i.test(reason)) return reason;
  const tlsReason = await probeTls(target);
  return tlsReason ? `${reason}: ${tlsReason}` : reason;
}

/**
 * A raw native client: the package's `Client` (the addon's class has these native-only methods; the package is an
 * optional peer, so there is no class to test against here), and not one of the library's own clients.
 */
export function isRawNativeClient(client: unknown): client is NativeClient {
  const candidate = client as Record<string | symbol, unknown> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate[LIBRARY_CLIENT] !== true &&
    typeof candidate.createReader === 'function' &&
    typeof candidate.getPartitionsForTopic === 'function'
  );
}

const reasonOf = (error: unknown): string => {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
};

/** The native client's error text, with what a user needs to act on it. */
function describeFailure(reason: string): string {
  if (/TLS/.test(reason)) return reason;
  if (/TimeOut/i.test(reason))
    // libpulsar retries a connection the broker refused for authentication until the operation times out, so a
    // missing, wrong or expired token surfaces here as a timeout, never as its own error.
    return (
      `${reason} (no answer in time: is the broker running and reachable at that address? ` +
      'With token authentication, a missing, wrong or expired token also ends this way: check the token)'
    );
  if (/TopicNotFound|NotFound|does not exist/i.test(reason))
    return `${reason} (does the tenant/namespace exist, and may topics be created there?)`;
  if (/Authentication|Unauthorized|AuthorizationError|NotAllowed/i.test(reason))
    return `${reason} (check the token and the role's permissions)`;
  return reason;
}

export class NativeClientAdapter implements LibraryClient {
  readonly [LIBRARY_CLIENT] = true as const;
  private readonly where: string;

  constructor(readonly native: NativeClient) {
    const url = serviceUrls.get(native);
    this.where = url ? ` at ${url}` : '';
  }

  async createProducer(config: PulsarProducerConfig): Promise<PulsarProducer> {
    // A setting given as undefined keeps the library's default (the addon would take it as its own default).
    const given = Object.fromEntries(Object.entries(nativeProducerConfig(config)).filter(([, v]) => v !== undefined));
    const nativeConfig = { ...PRODUCER_DEFAULTS, ...given } as NativeProducerConfig;
    try {
      return new NativeProducerAdapter(
        await this.native.createProducer(nativeConfig),
        this.where,
        nativeConfig.batchingEnabled !== false,
      );
    } catch (error) {
      const reason = await withTlsReason(this.native, reasonOf(error));
      throw new BabelQueueError(
        `cannot create a producer for topic ${JSON.stringify(config.topic)}${this.where}: ${describeFailure(reason)}`,
        { cause: error },
      );
    }
  }

  subscribe(config: PulsarConsumerConfig): Promise<PulsarConsumer> {
    return this.subscribeWith(config);
  }

  /**
   * Subscribes and hands each message to `listener`, which may return a promise to hold the next one. The
   * messages are taken with receive() (see receive-pump.ts), a backlog several at a time when `room` says how many
   * the listener takes before it returns a promise; a zero receiver queue, where the addon cannot receive
   * asynchronously, keeps the addon's own `listener`.
   */
  async subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => PushResult,
    room?: PushRoom,
  ): Promise<PulsarConsumer> {
    const deliver = (raw: NativeMessage): PushResult => listener(new NativeMessageAdapter(raw));
    if (config.receiverQueueSize === 0) return this.subscribeWith({ ...config, listener: deliver });
    const size = Math.min(RECEIVE_BATCH, Math.floor((config.receiverQueueSize ?? NATIVE_RECEIVER_QUEUE) / 2));
    const batched = room !== undefined && size > 1;
    const consumer = await this.subscribeWith(
      config,
      batched
        ? { batchReceivePolicy: { maxNumMessages: size, maxNumBytes: -1, timeoutMs: RECEIVE_BATCH_WAIT_MS } }
        : {},
    );
    consumer.startPump(deliver, batched ? { size, taker: room } : undefined);
    return consumer;
  }

  /** `fixed`: the adapter's own settings, which the user's are not allowed to carry. */
  private async subscribeWith(
    config: NativeConsumerConfig,
    fixed: Partial<NativeConsumerConfig> = {},
  ): Promise<NativeConsumerAdapter> {
    refuseUnsupported('consumer', config);
    try {
      return new NativeConsumerAdapter(await this.native.subscribe({ ...config, ...fixed }));
    } catch (error) {
      const reason = await withTlsReason(this.native, reasonOf(error));
      throw new BabelQueueError(
        `cannot subscribe ${JSON.stringify(config.subscription)} to topic ${JSON.stringify(config.topic)}${this.where}: ` +
          describeFailure(reason),
        { cause: error },
      );
    }
  }

  close(): Promise<null | void> {
    return this.native.close().then(() => undefined);
  }
}

/**
 * A batching producer holds a lone message for its batch timer (10 ms by default), so a caller that awaits each
 * send one by one would wait that long every time. A send with no other send in flight is therefore flushed at
 * once; sends made while others are in flight still fill batches.
 */
class NativeProducerAdapter implements PulsarProducer {
  private pending = 0;

  constructor(
    private readonly native: PulsarProducer,
    private readonly where: string,
    /** Without batching every send goes at once, and a flush would only cost a native call. */
    private readonly batching: boolean,
  ) {}

  async send(message: PulsarProducerMessage): Promise<PulsarMessageId | null> {
    this.pending += 1;
    try {
      const sent = this.native.send(message);
      if (this.batching && this.pending === 1) this.native.flush().catch(() => undefined);
      return await sent;
    } catch (error) {
      throw new BabelQueueError(
        `send to ${JSON.stringify(this.native.getTopic())}${this.where} failed: ${describeFailure(reasonOf(error))}`,
        { cause: error },
      );
    } finally {
      this.pending -= 1;
    }
  }

  flush(): Promise<null | void> {
    return this.native.flush();
  }

  close(): Promise<null | void> {
    return this.native.close();
  }

  getTopic(): string {
    return this.native.getTopic();
  }

  isConnected(): boolean {
    return this.native.isConnected?.() ?? true;
  }
}

/**
 * A native message, each of its values read through the addon at most once: the property map (as a plain object),
 * redelivery count and id are fetched on first use and kept, since every getter is a call into the addon that
 * builds its value anew (the property map from the native map, the id as a new native object).
 */
export class NativeMessageAdapter implements PulsarMessage {
  private id?: PulsarMessageId;
  private properties?: Record<string, string>;
  private redeliveryCount?: number;

  constructor(readonly native: NativeMessage) {}

  getData(): Buffer {
    // A new Buffer each call, as the addon gives it: the transport reads it once, and a handler that changes its
    // copy cannot change what a retry copy carries.
    return this.native.getData();
  }

  getProperties(): Record<string, string> {
    // The native client returns an Array carrying the pairs as named members; each caller gets its own map.
    this.properties ??= Object.assign({}, this.native.getProperties());
    return { ...this.properties };
  }

  getRedeliveryCount(): number {
    this.redeliveryCount ??= this.native.getRedeliveryCount();
    return this.redeliveryCount;
  }

  getMessageId(): PulsarMessageId {
    this.id ??= this.native.getMessageId();
    return this.id;
  }

  getTopicName(): string {
    return this.native.getTopicName();
  }

  getPublishTimestamp(): number {
    return this.native.getPublishTimestamp();
  }

  getPartitionKey(): string {
    return this.native.getPartitionKey();
  }

  getOrderingKey(): string {
    return this.native.getOrderingKey?.() ?? '';
  }
}

const rawOf = (message: PulsarMessage): NativeMessage =>
  message instanceof NativeMessageAdapter ? message.native : (message as NativeMessage);

class NativeConsumerAdapter implements PulsarConsumer {
  private closed = false;
  private pump: ReceivePump | null = null;

  constructor(private readonly native: NativeConsumer) {}

  startPump(deliver: (message: NativeMessage) => PushResult, batch?: PumpBatch): void {
    this.pump = startReceivePump<NativeMessage>(this.native, deliver, batch);
  }

  async receive(timeoutMs?: number): Promise<PulsarMessage> {
    try {
      return new NativeMessageAdapter(await this.native.receive(timeoutMs));
    } catch (error) {
      // Re-created here so that callers in any realm see an Error; the text keeps the client's words.
      throw new BabelQueueError(this.closed ? `consumer closed: ${reasonOf(error)}` : reasonOf(error), {
        cause: error,
      });
    }
  }

  acknowledge(message: PulsarMessage): Promise<null | void> {
    // The addon's own promise (it resolves to null): no second promise per message.
    return this.native.acknowledge(rawOf(message));
  }

  negativeAcknowledge(message: PulsarMessage): void {
    this.native.negativeAcknowledge(rawOf(message));
  }

  close(): Promise<null | void> {
    this.closed = true;
    this.pump?.stop();
    return this.native.close().then(() => undefined);
  }

  unsubscribe(): Promise<null | void> {
    this.pump?.stop();
    return this.native.unsubscribe().then(() => undefined);
  }

  isConnected(): boolean {
    return !this.closed && this.native.isConnected();
  }
}
