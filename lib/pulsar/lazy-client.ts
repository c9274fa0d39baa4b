/**
 * A Pulsar client created when it is first needed: the first producer or consumer (the server's listen(), the
 * first publish, a redrive), or `open()`. Until then nothing is loaded or connected, so an application that never
 * listens or publishes (a test module whose publisher is overridden, a CLI command that only reads its options)
 * starts and closes without the `pulsar-client` package and without a broker. Its settings are checked when it is
 * made: a wrong option is still an error at start-up.
 */
import { BabelQueueError } from '../envelope/index.js';
import {
  buildPulsarClient,
  prepareClientSettings,
  type CreateClientDependencies,
  type PreparedClientSettings,
  type PulsarClientKind,
  type PulsarClientSettings,
} from './client-factory.js';
import {
  LIBRARY_CLIENT,
  type LibraryClient,
  type PulsarClientLike,
  type PulsarConsumer,
  type PulsarConsumerConfig,
  type PulsarMessage,
  type PulsarProducer,
  type PulsarProducerConfig,
  type PushResult,
} from './client-types.js';
import { toLibraryClient } from './library-client.js';
import type { PushRoom } from './push-room.js';
import { rememberClientUrl } from './startup-failure.js';
import { rememberAdminAccessOf } from './topic-lister.js';

/**
 * The Pulsar client BabelQueueModule makes from `serviceUrl` (`BABEL_PULSAR_CLIENT`): a `PulsarClientLike` that
 * creates the native `Client` or a `PulsarWebSocketClient` on its first producer or consumer, or on `open()`.
 */
export class LazyPulsarClient implements LibraryClient {
  readonly [LIBRARY_CLIENT] = true as const;
  /** The client the service URL's scheme selects. */
  readonly kind: PulsarClientKind;
  /** The service URL, trimmed. */
  readonly serviceUrl: string;
  private readonly prepared: PreparedClientSettings;
  private creating: Promise<{ raw: PulsarClientLike; library: LibraryClient }> | undefined;
  private created: PulsarClientLike | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    settings: PulsarClientSettings,
    private readonly dependencies: CreateClientDependencies = {},
  ) {
    this.prepared = prepareClientSettings(settings, dependencies);
    this.kind = this.prepared.kind;
    this.serviceUrl = this.prepared.serviceUrl;
    // A failed start names the URL and the client, and topic patterns list topics, before the client exists.
    rememberClientUrl(this, this.serviceUrl, this.kind);
    rememberAdminAccessOf(this, () => this.open());
  }

  /** The client itself (the native `pulsar-client` Client or a PulsarWebSocketClient), created on the first call. */
  async open(): Promise<PulsarClientLike> {
    return (await this.create()).raw;
  }

  /** The client once it was created; undefined before. */
  get current(): PulsarClientLike | undefined {
    return this.created;
  }

  /** A producer of the client, created first when it does not exist yet. */
  async createProducer(config: PulsarProducerConfig): Promise<PulsarProducer> {
    return (await this.create()).library.createProducer(config);
  }

  /** A consumer of the client, created first when it does not exist yet. */
  async subscribe(config: PulsarConsumerConfig): Promise<PulsarConsumer> {
    return (await this.create()).library.subscribe(config);
  }

  /** A consumer of the client whose messages come through the client's own intake (see LibraryClient). */
  async subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => PushResult,
    room?: PushRoom,
  ): Promise<PulsarConsumer> {
    return (await this.create()).library.subscribePush(config, listener, room);
  }

  /** Closes the client when it was created (waiting for a creation under way); later uses are refused. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const pending = this.creating?.catch(() => undefined);
      const made = await pending;
      await made?.raw.close();
    })();
    return this.closing;
  }

  /** The client's connection state when it was created and reports one; never created counts as not broken. */
  isConnected(): boolean {
    const probe = (this.created as { isConnected?: () => boolean } | undefined)?.isConnected;
    return typeof probe === 'function' ? probe.call(this.created) !== false : true;
  }

  private create(): Promise<{ raw: PulsarClientLike; library: LibraryClient }> {
    if (this.closing) return Promise.reject(new BabelQueueError('the Pulsar client is closed'));
    this.creating ??= buildPulsarClient(this.prepared, this.dependencies).then(
      (raw) => {
        this.created = raw;
        return { raw, library: toLibraryClient(raw) };
      },
      (error: unknown) => {
        // Not kept: a later use tries again (and fails again with the same clear error while nothing changed).
        this.creating = undefined;
        throw error;
      },
    );
    return this.creating;
  }
}
