import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { EventEmitter } from 'node:events';
import { isObservable, lastValueFrom } from 'rxjs';
import { TopicConsumer, type BabelQueueHooks, type ConsumerLogger, type SettledEvent } from '../consumer/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarClientLike, PulsarConsumerConfig, PulsarMessage, PulsarProducer } from '../pulsar/client-types.js';
import { canPush, PushFeed } from '../consumer/push-feed.js';
import { toLibraryClient } from '../pulsar/native/adapter.js';
import { BabelContext } from './babel.context.js';
import { runOnce } from '../idempotency/run-once.js';
import { ConnectionWatch } from './connection-watch.js';
import type { BabelHandlerExtras } from './babel-handler.decorator.js';
import { BABEL_HANDLER_EXTRAS, BABEL_TRANSPORT } from './constants.js';
import { failureCause } from './failure-capture.js';
import {
  isProducer,
  resolveServerOptions,
  type BabelPulsarServerOptions,
  type ResolvedServerOptions,
} from './server-options.js';

/** `stalled`: connected, but some handler passed its time-out and still runs (see describe()). */
export type BabelServerStatus = 'connected' | 'disconnected' | 'reconnecting' | 'stalled' | 'closed';

/** Events of `server.on(...)`. */
export type BabelServerEvents = {
  /** Every delivery once settled: acknowledged, retried, dead-lettered, negatively acknowledged, dropped. */
  settled: (event: SettledEvent) => void;
  /** An error outside any one message (a failing receive, a consumer that cannot reconnect). */
  error: (error: Error) => void;
};

interface TopicResources {
  consumer: TopicConsumer;
  owned: PulsarProducer[];
}

const STATUS_POLL_MS = 1000;

/**
 * A NestJS CustomTransportStrategy that consumes Pulsar topics and routes each message to the
 * @BabelHandler method of its URN, settling it as the BabelQueue reference transport does.
 */
export class BabelPulsarServer extends Server<BabelServerEvents, BabelServerStatus> implements CustomTransportStrategy {
  override readonly transportId = BABEL_TRANSPORT;
  // Handler errors must reach the settlement logic rather than be logged and swallowed by Nest.
  override readonly propagatesEventHandlerErrors = true;
  protected override readonly logger: Logger = new Logger(BabelPulsarServer.name);

  private readonly settings: ResolvedServerOptions;
  /** The client the server calls (the native one behind an adapter that evens out its behaviour). */
  private readonly client: PulsarClientLike;
  private readonly events = new EventEmitter();
  private readonly handlerNames = new Map<string, string>();
  private readonly handlerTimeouts = new Map<string, number>();
  private readonly running: TopicResources[] = [];
  private statusTimer: NodeJS.Timeout | null = null;
  private lastStatus: BabelServerStatus | null = null;
  private readonly connections = new ConnectionWatch();
  private closing: Promise<void> | null = null;

  constructor(private readonly options: BabelPulsarServerOptions) {
    super();
    this.settings = resolveServerOptions(options);
    this.client = toLibraryClient(options.client);
    // An 'error' event without listeners would throw; errors are logged here instead.
    this.events.on('error', () => undefined);
  }

  /** Subscribes every topic, then calls back (with the error if any subscription failed). */
  listen(callback: (error?: unknown) => void): void {
    this.start().then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  /** Stops receiving, lets in-flight messages settle (up to shutdownTimeoutMs), closes consumers. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  on<K extends keyof BabelServerEvents>(event: K, callback: BabelServerEvents[K]): this {
    this.events.on(event, callback as (...args: unknown[]) => void);
    return this;
  }

  /** The Pulsar client the server consumes with. */
  unwrap<T>(): T {
    return this.options.client as T;
  }

  /** Rejects a second handler for one URN, naming both. */
  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler = false,
    extras: Record<string, unknown> = {},
  ): void {
    const urn = this.normalizePattern(pattern as string);
    const babelExtras = extras[BABEL_HANDLER_EXTRAS] as BabelHandlerExtras | undefined;
    const name = babelExtras?.handler ?? 'an unnamed handler';
    const existing = this.handlerNames.get(urn);
    if (existing !== undefined || this.messageHandlers.has(urn)) {
      throw new Error(
        `two handlers for ${urn} on one BabelPulsarServer: ${existing ?? 'an unnamed handler'} and ${name}`,
      );
    }
    this.handlerNames.set(urn, name);
    if (babelExtras?.timeoutMs !== undefined) this.handlerTimeouts.set(urn, babelExtras.timeoutMs);
    super.addHandler(pattern, callback, isEventHandler, extras);
  }

  /**
   * The handler of a URN. Patterns are stored as given (addHandler normalises a string to itself), so the map
   * lookup is enough: Nest's default first tries JSON.parse on every pattern, which throws for a URN.
   */
  override getHandlerByPattern(pattern: string): MessageHandler | null {
    return this.messageHandlers.get(pattern) ?? null;
  }

  /** Consumers currently running, with how many messages each is handling (for health checks). */
  describe(): Array<{ topic: string; active: number; overdue: number; connected: boolean }> {
    return this.running.map(({ consumer }) => ({
      topic: consumer.topic,
      active: consumer.activeCount,
      overdue: consumer.overdueCount,
      connected: consumer.isConnected(),
    }));
  }

  private async start(): Promise<void> {
    if (this.closing) throw new Error('BabelPulsarServer was closed; create a new one to listen again');
    if (this.running.length > 0) return;
    try {
      for (const topic of this.settings.topics) {
        const resources = await this.startTopic(topic);
        this.running.push(resources);
      }
    } catch (error) {
      this.setStatus('disconnected');
      await this.releaseAll();
      throw error;
    }
    this.running.forEach(({ consumer }) => consumer.start());
    this.setStatus('connected');
    this.statusTimer = setInterval(() => this.pollStatus(), STATUS_POLL_MS);
    this.statusTimer.unref();
  }

  private async startTopic(topic: string): Promise<TopicResources> {
    const owned: PulsarProducer[] = [];
    const { client } = this;
    const acquire = async (target: string): Promise<PulsarProducer> => {
      if (this.options.producers) return this.options.producers.producerFor(target);
      const producer = await client.createProducer({ topic: target });
      owned.push(producer);
      return producer;
    };
    try {
      const retry = this.options.retry ?? 'republish';
      const retryProducer = retry === 'nack' ? null : isProducer(retry) ? retry : await acquire(topic);
      const deadLetter = this.options.deadLetter ?? true;
      const deadLetterProducer =
        deadLetter === false
          ? null
          : isProducer(deadLetter)
            ? deadLetter
            : await acquire(deadLetter === true ? `${topic}.dlq` : deadLetter.trim());
      // A client that pushes (the native listener) saves a receive() round trip per message.
      const feed = canPush(client) ? new PushFeed() : undefined;
      const subscription: PulsarConsumerConfig = {
        topic,
        subscription: this.settings.subscription,
        subscriptionType: this.settings.subscriptionType,
        ...(this.options.subscriptionInitialPosition && {
          subscriptionInitialPosition: this.options.subscriptionInitialPosition,
        }),
        ...(this.options.receiverQueueSize !== undefined && { receiverQueueSize: this.options.receiverQueueSize }),
        ...(this.options.nackRedeliverTimeoutMs !== undefined && {
          nAckRedeliverTimeoutMs: this.options.nackRedeliverTimeoutMs,
        }),
      };
      const pulsarConsumer =
        feed && canPush(client)
          ? await client.subscribePush(subscription, feed.deliver)
          : await client.subscribe(subscription);
      const consumer = new TopicConsumer({
        topic,
        consumer: pulsarConsumer,
        ...(feed && { feed }),
        retryProducer,
        deadLetterProducer,
        policy: { maxAttempts: this.settings.maxAttempts },
        concurrency: this.settings.concurrency,
        receiveTimeoutMs: this.settings.receiveTimeoutMs,
        hasHandler: (urn) => this.messageHandlers.has(urn),
        handlerTimeoutMs: (urn) => this.handlerTimeouts.get(urn) ?? this.settings.handlerTimeoutMs,
        dispatch: (urn, envelope, message) => this.dispatch(urn, envelope, message, topic),
        hooks: this.hooks(),
        logger: this.consumerLogger(),
        onSettled: (event) => this.events.emit('settled', event),
        onLoopError: (error) => {
          this.logger.error(`receive on ${topic} failed: ${error.message}`);
          this.events.emit('error', error);
        },
      });
      return { consumer, owned };
    } catch (error) {
      await Promise.allSettled(owned.map((producer) => producer.close()));
      throw error;
    }
  }

  private async dispatch(urn: string, envelope: Envelope, message: PulsarMessage, topic: string): Promise<void> {
    const handler = this.getHandlerByPattern(urn);
    if (!handler) throw new Error(`handler for ${urn} disappeared`);
    const context = new BabelContext([envelope, message, topic, urn]);
    const run = async (): Promise<void> => {
      try {
        const result: unknown = await handler(envelope.data, context);
        // Nest reports handler failures (after exception filters) as an Observable that errors.
        if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
      } catch (reported) {
        throw failureCause(context, reported);
      }
    };
    const idempotency = this.options.idempotency;
    if (!idempotency) return run();
    if ((await runOnce(idempotency.store, envelope.meta?.id, run)) === 'duplicate')
      this.logger.log(`skipped ${urn} ${envelope.meta.id}: already handled (idempotency)`);
  }

  private hooks(): BabelQueueHooks {
    const { onError, onUnknownUrn, onRoutingMismatch, onDeadLetter } = this.options;
    return {
      onError: (error, envelope, message) => {
        this.logger.error(`${error.name}: ${error.message}`);
        return onError?.(error, envelope, message);
      },
      ...(onUnknownUrn && { onUnknownUrn }),
      ...(onRoutingMismatch && { onRoutingMismatch }),
      ...(onDeadLetter && { onDeadLetter }),
    };
  }

  private consumerLogger(): ConsumerLogger {
    return this.options.logger ?? this.logger;
  }

  private pollStatus(): void {
    const states = this.running.map(({ consumer }) => consumer.isConnected());
    const now = Date.now();
    this.running.forEach(({ consumer }, index) => this.reportConnection(consumer.topic, states[index]!, now));
    if (states.includes(false)) this.setStatus('reconnecting');
    else if (this.running.some(({ consumer }) => consumer.overdueCount > 0)) this.setStatus('stalled');
    else this.setStatus('connected');
  }

  /** One line when a consumer's connection drops and one when it is back, with the outage's length. */
  private reportConnection(topic: string, connected: boolean, now: number): void {
    const change = this.connections.observe(topic, connected, now);
    if (change?.kind === 'down') {
      this.consumerLogger().warn(
        `consumer of ${topic} lost its broker connection; reconnecting (messages wait on the broker)`,
      );
    } else if (change?.kind === 'up') {
      this.consumerLogger().log(`consumer of ${topic} reconnected after ${Math.round(change.downForMs / 100) / 10} s`);
    }
  }

  private setStatus(status: BabelServerStatus): void {
    if (this.lastStatus === status) return;
    this.lastStatus = status;
    this._status$.next(status);
  }

  private async stop(): Promise<void> {
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = null;
    await this.releaseAll();
    this.setStatus('closed');
  }

  private async releaseAll(): Promise<void> {
    const running = this.running.splice(0);
    await Promise.all(running.map(({ consumer }) => consumer.stop(this.settings.shutdownTimeoutMs)));
    // Producers close only after every in-flight settlement had its chance to write.
    await Promise.allSettled(running.flatMap(({ owned }) => owned.map((producer) => producer.close())));
  }
}
