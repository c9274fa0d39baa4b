import {
  LIBRARY_CLIENT,
  type LibraryClient,
  type PulsarConsumerConfig,
  type PulsarMessage,
  type PulsarProducerConfig,
  type PushResult,
} from '../client-types.js';
import type { PushRoom } from '../push-room.js';
import { PulsarWebSocketConsumer } from './consumer.js';
import { PulsarWebSocketError } from './errors.js';
import { resolveOptions, type PulsarWebSocketClientOptions, type ResolvedOptions } from './options.js';
import { PulsarWebSocketProducer } from './producer.js';
import { parseTopic } from '../topic-name.js';
import { rememberAdminAccess } from '../topic-lister.js';

type Handle = PulsarWebSocketProducer | PulsarWebSocketConsumer;

function assertConfig(config: unknown, operation: string): void {
  if (typeof config !== 'object' || config === null) {
    throw new PulsarWebSocketError(`${operation} needs a configuration object with a topic`, {
      code: 'InvalidArgument',
    });
  }
}

/**
 * Pure-TypeScript Pulsar client over the broker's WebSocket API (`/ws/v2/…` on the web service port), shaped
 * like the native `pulsar-client` Client. Each producer and consumer owns one WebSocket.
 */
export class PulsarWebSocketClient implements LibraryClient {
  /** @internal */
  readonly [LIBRARY_CLIENT] = true as const;
  private readonly options: ResolvedOptions;
  private readonly handles = new Set<Handle>();
  private closing: Promise<null> | undefined;

  constructor(options: PulsarWebSocketClientOptions) {
    this.options = resolveOptions(options);
    // The web service that serves the WebSocket API also serves the admin API (topic patterns list topics there).
    rememberAdminAccess(this, options.serviceUrl, this.options.headers);
  }

  async createProducer(config: PulsarProducerConfig): Promise<PulsarWebSocketProducer> {
    this.assertOpen('create producer');
    assertConfig(config, 'createProducer');
    const topic = parseTopic(config.topic);
    const producer = new PulsarWebSocketProducer(topic, config, this.options, (p) => this.handles.delete(p));
    return this.open(producer, 'producer', topic.full);
  }

  async subscribe(config: PulsarConsumerConfig): Promise<PulsarWebSocketConsumer> {
    this.assertOpen('subscribe');
    assertConfig(config, 'subscribe');
    const topic = parseTopic(config.topic);
    const consumer = new PulsarWebSocketConsumer(topic, config, this.options, (c) => this.handles.delete(c));
    return this.open(consumer, 'consumer', topic.full);
  }

  /**
   * A consumer that hands each message to `listener` as its frame arrives (the library's intake; see LibraryClient).
   * The broker's push window (`receiverQueueSize`) bounds what it holds.
   * @internal
   */
  async subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => PushResult,
    _room?: PushRoom,
  ): Promise<PulsarWebSocketConsumer> {
    const consumer = await this.subscribe(config);
    consumer.pushTo(listener);
    return consumer;
  }

  /** Closes every producer and consumer created by this client. Idempotent. */
  close(): Promise<null> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.handles].map((handle) => handle.close()));
      this.handles.clear();
      return null;
    })();
    return this.closing;
  }

  private async open<T extends Handle>(handle: T, kind: string, topic: string): Promise<T> {
    this.handles.add(handle);
    try {
      await handle.connect();
    } catch (err) {
      this.handles.delete(handle);
      await handle.close();
      if (this.closing) throw this.closedError(`create ${kind}`, topic, err);
      throw err;
    }
    if (this.closing) {
      await handle.close();
      throw this.closedError(`create ${kind}`, topic);
    }
    return handle;
  }

  private assertOpen(operation: string): void {
    if (this.closing) throw this.closedError(operation);
  }

  private closedError(operation: string, topic?: string, cause?: unknown): PulsarWebSocketError {
    return new PulsarWebSocketError(
      `Cannot ${operation}${topic ? ` for topic ${topic}` : ''}: the Pulsar WebSocket client is closed (AlreadyClosed)`,
      { code: 'AlreadyClosed', ...(topic ? { topic } : {}), ...(cause ? { cause } : {}) },
    );
  }
}
