import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { EventEmitter } from 'node:events';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { isObservable, lastValueFrom } from 'rxjs';
import { TopicConsumer, type BabelQueueHooks, type ConsumerLogger, type SettledEvent } from '../consumer/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarClientLike, PulsarConsumerConfig, PulsarMessage, PulsarProducer } from '../pulsar/client-types.js';
import { canPush, PushFeed } from '../consumer/push-feed.js';
import { toLibraryClient } from '../pulsar/native/adapter.js';
import { contextFor } from './babel.context.js';
import { runOnce } from '../idempotency/run-once.js';
import { ConnectionWatch } from './connection-watch.js';
import { HandlerRoutes, type Binding, type Route } from './handler-routes.js';
import type { BabelHandlerExtras } from './babel-handler.decorator.js';
import { BABEL_HANDLER_EXTRAS, BABEL_OWN_IDEMPOTENCY, BABEL_TRANSPORT } from './constants.js';
import { handlerPayload } from '../schema/message-payload.js';
import { failureOf, unrelayedFailureOf } from './failure-classify.js';
import { ATTACH_RELAY, type BabelFailureRelay, type RelayTarget } from './failure-relay.js';
import { subscriptionLine } from './startup-lines.js';
import { BrokerWait } from './broker-wait.js';
import { normalizeTopic } from '../pulsar/websocket/index.js';
import { messageIdText } from '../pulsar/message-id.js';
import { inProcessSpan, loadOpenTelemetry, openTelemetry, tracingObserved } from '../otel/tracing.js';
import { ConsumerMetrics } from '../otel/metrics.js';
import {
  DeferredProducer,
  isNotAuthorized,
  ProducerNotAuthorizedError,
  type ProducerPurpose,
  type RefusedProducerState,
} from './refused-producer.js';
import { isRetriableNestFailure } from './failure-classify.js';
import {
  checkDelayable,
  isProducer,
  resolveServerOptions,
  type BabelPulsarServerOptions,
  type ResolvedServerOptions,
} from './server-options.js';
import { keepDeadLetters } from '../redrive/keep-dead-letters.js';
import { delayedRetryRefusal, RequestedSettlement, type SettleRequests } from '../consumer/settle-request.js';
import { composeRetriable } from './retriable-rule.js';
import { pauseKey, selectSubscriptions, type SubscriptionTarget } from './pause-control.js';

/**
 * `stalled`: connected, but some handler passed its time-out and still runs (see describe()). `paused`: connected,
 * and every consumer is paused (see pause(); describe() tells which are when only some are).
 */
export type BabelServerStatus = 'connected' | 'disconnected' | 'reconnecting' | 'stalled' | 'paused' | 'closed';

/** Events of `server.on(...)`. */
export type BabelServerEvents = {
  /** Every delivery once settled: acknowledged, retried, dead-lettered, negatively acknowledged, dropped. */
  settled: (event: SettledEvent) => void;
  /** An error outside any one message (a failing receive, a consumer that cannot reconnect). */
  error: (error: Error) => void;
};

interface TopicResources {
  consumer: TopicConsumer;
  subscription: string;
  owned: PulsarProducer[];
  /** Retry / dead-letter producers the broker refused for lack of permission (retried on each write). */
  deferred: DeferredProducer[];
}

const STATUS_POLL_MS = 1000;
/** A refused producer is asked for again this often (and on the next write after it). */
const REFUSED_PRODUCER_RETRY_MS = 2000;
/** When a server of each connection name last started in this process (see serverStartedSince). */
const lastStartByConnection = new Map<string | undefined, number>();

/**
 * True when some BabelPulsarServer serving `connection` started at or after `since` (ms): the start-up check does
 * not report a module's unstarted server when the application consumes through a server of its own instead.
 */
export function serverStartedSince(connection: string | undefined, since: number): boolean {
  return (lastStartByConnection.get(connection) ?? -Infinity) >= since;
}

const fullTopic = (topic: string): string => {
  try {
    return normalizeTopic(topic);
  } catch {
    return topic;
  }
};

/**
 * A NestJS CustomTransportStrategy that consumes Pulsar topics and routes each message to the
 * @BabelHandler method of its URN, settling it as the BabelQueue reference transport does.
 */
export class BabelPulsarServer
  extends Server<BabelServerEvents, BabelServerStatus>
  implements CustomTransportStrategy, RelayTarget
{
  override readonly transportId = BABEL_TRANSPORT;
  // Handler errors must reach the settlement logic rather than be logged and swallowed by Nest.
  override readonly propagatesEventHandlerErrors = true;
  protected override readonly logger: Logger = new Logger(BabelPulsarServer.name);

  private readonly settings: ResolvedServerOptions;
  /** The client the server calls (the native one behind an adapter that evens out its behaviour). */
  private readonly client: PulsarClientLike;
  private readonly events = new EventEmitter();
  private readonly routes: HandlerRoutes;
  /** Patterns registered without @BabelHandler, each warned about once. */
  private readonly foreignPatterns = new Set<string>();
  private started = false;
  /** The failure relays of the application's modules that declare handlers (one per module). */
  private readonly relays = new Set<BabelFailureRelay>();
  private readonly running: TopicResources[] = [];
  private statusTimer: NodeJS.Timeout | null = null;
  private lastStatus: BabelServerStatus | null = null;
  private readonly connections = new ConnectionWatch();
  private closing: Promise<void> | null = null;
  private metrics: ConsumerMetrics | undefined;
  /** Retries the subscriptions while the broker did not answer at start (brokerAtStart: 'optional'). */
  private brokerWait: BrokerWait | null = null;
  /** The consumers paused by pause() (pauseKey), also those not subscribed yet: they start paused. */
  private readonly pausedKeys = new Set<string>();
  /** Each route's composed retriable rule (the server itself for a URN without a route). */
  private readonly retriableRules = new WeakMap<object, (error: unknown) => boolean>();

  constructor(private readonly options: BabelPulsarServerOptions) {
    super();
    this.settings = resolveServerOptions(options);
    this.client = toLibraryClient(options.client);
    this.routes = new HandlerRoutes(this.settings.topics, this.settings.subscription);
    // An 'error' event without listeners would throw; errors are logged here instead.
    this.events.on('error', () => undefined);
  }

  /** Called by the failure relay of each module with handlers, when this server joins their application. */
  [ATTACH_RELAY](relay: BabelFailureRelay): void {
    this.relays.add(relay);
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

  /** The registration name this server serves (`BabelQueueModule.forRoot({ name })`); undefined = the unnamed one. */
  get connectionName(): string | undefined {
    return this.options.name;
  }

  /** True once listen() was called (the module warns when a server with handlers is never started). */
  get wasStarted(): boolean {
    return this.started;
  }

  /**
   * Registers a handler on the topics and subscription its @BabelHandler names (default: the server's), if its
   * `connection` is this server's name. Rejects a second handler for one URN on one subscription, naming both.
   */
  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler = false,
    extras: Record<string, unknown> = {},
  ): void {
    const urn = this.normalizePattern(pattern as string);
    const babelExtras = extras[BABEL_HANDLER_EXTRAS] as BabelHandlerExtras | undefined;
    // Another named registration's handler: its own server runs it.
    if (babelExtras?.connection !== this.options.name) return;
    if (!babelExtras) this.warnForeignPattern(urn, isEventHandler);
    const name = babelExtras?.handler ?? 'an unnamed handler';
    const { maxAttempts, retryPolicy, timeoutMs, topic, subscription, owner, method, schema, isRetriable } =
      babelExtras ?? {};
    if (retryPolicy)
      checkDelayable(this.options.retry === 'nack', this.settings.subscriptionType, `${name} retryPolicy`);
    if (topic !== undefined && isProducer(this.options.retry)) {
      throw new TypeError(
        `${name} names its own topic, but options.retry is a single producer: a retry goes back to its own topic; ` +
          "use retry 'republish'",
      );
    }
    this.routes.add(
      urn,
      {
        handler: callback,
        name,
        ...(owner !== undefined && method !== undefined && { declaredAt: { owner, method } }),
        ...(timeoutMs !== undefined && { timeoutMs }),
        ...(schema !== undefined && { schema }),
        ...(isRetriable !== undefined && { isRetriable }),
        ...(extras[BABEL_OWN_IDEMPOTENCY] === true && { ownIdempotency: true }),
        ...((maxAttempts !== undefined || retryPolicy !== undefined) && {
          policy: {
            ...(maxAttempts !== undefined && { maxAttempts }),
            ...(retryPolicy !== undefined && { retryPolicy }),
          },
        }),
      },
      { ...(topic !== undefined && { topic }), ...(subscription !== undefined && { subscription }) },
    );
    if (!this.messageHandlers.has(urn)) super.addHandler(pattern, callback, isEventHandler, extras);
  }

  /**
   * The handler of a URN. Patterns are stored as given (addHandler normalises a string to itself), so the map
   * lookup is enough: Nest's default first tries JSON.parse on every pattern, which throws for a URN.
   */
  override getHandlerByPattern(pattern: string): MessageHandler | null {
    return this.messageHandlers.get(pattern) ?? null;
  }

  /**
   * Consumers currently running, with how many messages each is handling (for health checks). `refused`: the
   * retry or dead-letter producers of the topic that the broker refuses for lack of permission, while it lasts.
   */
  describe(): Array<{
    topic: string;
    subscription: string;
    active: number;
    overdue: number;
    connected: boolean;
    /** Paused by pause(): no new message is handled until resume(). */
    paused: boolean;
    refused: RefusedProducerState[];
  }> {
    return this.running.map(({ consumer, deferred, subscription }) => ({
      topic: consumer.topic,
      subscription,
      active: consumer.activeCount,
      overdue: consumer.overdueCount,
      connected: consumer.isConnected(),
      paused: consumer.isPaused,
      refused: deferred.map((producer) => producer.state()).filter((state) => state.refused !== null),
    }));
  }

  /**
   * Stops handling new messages on the consumers `target` names (none: all of them; a topic alone: all its
   * subscriptions) until resume(). Resolves once the messages already being handled have been settled. Nothing is
   * lost: what the client had already received waits, unacknowledged, for resume() (or is redelivered after close).
   * Before listen(), the consumers start paused. Throws when `target` names no consumer of this server.
   */
  async pause(target?: SubscriptionTarget): Promise<void> {
    const keys = this.pauseKeysOf(target, 'pause()');
    for (const key of keys) this.pausedKeys.add(key);
    const pausing = this.running.filter((resources) => keys.has(this.keyOf(resources)));
    const settled = Promise.all(pausing.map(({ consumer }) => consumer.pause()));
    this.refreshStatus();
    await settled;
  }

  /** Handles messages again on the consumers `target` names (none: all), those held while paused first. */
  resume(target?: SubscriptionTarget): void {
    const keys = this.pauseKeysOf(target, 'resume()');
    for (const key of keys) this.pausedKeys.delete(key);
    for (const resources of this.running) if (keys.has(this.keyOf(resources))) resources.consumer.resume();
    this.refreshStatus();
  }

  private pauseKeysOf(target: SubscriptionTarget | undefined, call: string): Set<string> {
    if (this.closing) throw new Error(`${call}: BabelPulsarServer was closed`);
    const consumed = this.routes.subscribed().map(({ topic, subscription }) => ({ topic, subscription }));
    const selected = selectSubscriptions(consumed, target, call, fullTopic);
    return new Set(selected.map(({ topic, subscription }) => pauseKey(fullTopic(topic), subscription)));
  }

  private keyOf({ consumer, subscription }: TopicResources): string {
    return pauseKey(fullTopic(consumer.topic), subscription);
  }

  /** The status at once after pause() / resume() (the poll would tell within a second). */
  private refreshStatus(): void {
    if (this.statusTimer !== null) this.pollStatus();
  }

  private async start(): Promise<void> {
    if (this.closing) throw new Error('BabelPulsarServer was closed; create a new one to listen again');
    if (this.running.length > 0) return;
    this.started = true;
    lastStartByConnection.set(this.options.name, Date.now());
    // OpenTelemetry (an optional peer) is imported once; without it there are no spans and no metrics. With
    // both signals switched off it is not imported at all.
    const { tracing, metrics } = this.settings.telemetry;
    if ((tracing || metrics) && (await loadOpenTelemetry()) && metrics) this.metrics ??= ConsumerMetrics.create();
    this.warnFanOut(this.routes.subscribed());
    this.planDirectCalls(this.routes.subscribed());
    try {
      await this.subscribeAll();
    } catch (error) {
      if (this.settings.brokerAtStart === 'required') throw error;
      this.brokerWait = this.waitForBroker(error);
      return;
    }
    this.startConsuming();
  }

  /** Subscribes every binding; on a failure releases what was created and rejects. */
  private async subscribeAll(): Promise<void> {
    try {
      const bindings = this.routes.subscribed();
      for (const binding of bindings) this.running.push(await this.startBinding(binding, bindings));
    } catch (error) {
      this.setStatus('disconnected');
      await this.releaseAll();
      throw error;
    }
  }

  /** Retries the subscriptions until the broker answers: one log line when waiting begins, one when connected. */
  private waitForBroker(error: unknown): BrokerWait {
    const log = this.consumerLogger();
    const topics = this.settings.topics.map(fullTopic).join(', ');
    return new BrokerWait(
      {
        attempt: async () => {
          await this.subscribeAll();
          this.startConsuming();
        },
        onWaiting: (first) =>
          log.warn(
            `the broker did not answer at start (${first.message}); the app runs without consuming ${topics} and ` +
              'subscribes once the broker answers (health reports the consumers disconnected until then)',
          ),
        onConnected: (waitedMs) =>
          log.log(`the broker answered after ${Math.round(waitedMs / 100) / 10} s: consuming ${topics}`),
      },
      error instanceof Error ? error : new Error(String(error)),
    );
  }

  private startConsuming(): void {
    if (this.closing) return;
    for (const resources of this.running) {
      if (this.pausedKeys.has(this.keyOf(resources))) void resources.consumer.pause();
      resources.consumer.start();
    }
    for (const binding of this.routes.subscribed())
      this.consumerLogger().log(subscriptionLine(fullTopic(binding.topic), binding, this.settings.subscriptionType));
    this.setStatus('connected');
    this.statusTimer = setInterval(() => this.pollStatus(), STATUS_POLL_MS);
    this.statusTimer.unref();
    this.refreshStatus();
  }

  private async startBinding(binding: Binding, all: readonly Binding[]): Promise<TopicResources> {
    const { topic, routes } = binding;
    const owned: PulsarProducer[] = [];
    const deferred: DeferredProducer[] = [];
    const { client } = this;
    const pool = this.options.producers;
    const create = (target: string): Promise<PulsarProducer> =>
      pool ? pool.producerFor(target) : client.createProducer({ topic: target });
    const acquire = async (target: string, purpose: ProducerPurpose): Promise<PulsarProducer> => {
      try {
        const producer = await create(target);
        if (!pool) owned.push(producer);
        return producer;
      } catch (error) {
        // A role that may consume the topic but not produce where the server writes: start, report unhealthy,
        // and keep every message that needs that write on the broker until the permission is granted.
        if (!isNotAuthorized(error)) throw error;
        const refusal = new ProducerNotAuthorizedError(fullTopic(target), purpose, error);
        this.consumerLogger().error(
          `${refusal.message}. Consuming ${topic} anyway: messages that need ${purpose} are negatively ` +
            'acknowledged and stay on the broker (never acknowledged without their replacement); health reports ' +
            'the refused producer until the permission is granted',
        );
        const producer = new DeferredProducer(fullTopic(target), purpose, () => create(target), refusal, {
          retryEveryMs: REFUSED_PRODUCER_RETRY_MS,
          owns: !pool,
          retryInBackground: true,
          onCreated: (created) =>
            this.consumerLogger().log(`producer for ${created} created: ${purpose} of ${topic} are written again`),
        });
        owned.push(producer);
        deferred.push(producer);
        return producer;
      }
    };
    try {
      const retry = this.options.retry ?? 'republish';
      const retryProducer = retry === 'nack' ? null : isProducer(retry) ? retry : await acquire(topic, 'retry copies');
      const deadLetter = this.options.deadLetter ?? true;
      const deadLetterProducer =
        deadLetter === false
          ? null
          : isProducer(deadLetter)
            ? deadLetter
            : await acquire(deadLetter === true ? `${topic}.dlq` : deadLetter.trim(), 'dead-letter records');
      if (deadLetter !== false && !isProducer(deadLetter))
        await keepDeadLetters(client, deadLetter === true ? `${topic}.dlq` : deadLetter.trim(), (warning) =>
          this.consumerLogger().warn(warning),
        );
      // A client that pushes (the native listener) saves a receive() round trip per message.
      const feed = canPush(client) ? new PushFeed() : undefined;
      const subscription: PulsarConsumerConfig = {
        topic,
        subscription: binding.subscription,
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
        policy: {
          maxAttempts: this.settings.maxAttempts,
          ...(this.settings.retryPolicy && { retryPolicy: this.settings.retryPolicy }),
        },
        handlerPolicy: (urn) => routes.get(urn)?.policy,
        isRetriable: (error, urn) => this.retriableRuleOf(routes.get(urn))(error),
        delayedRetryRefusal: delayedRetryRefusal(
          retryProducer === null,
          this.settings.subscriptionType === 'Shared' || this.settings.subscriptionType === 'KeyShared',
        ),
        concurrency: this.settings.concurrency,
        // Held while paused at most what the client's own receiver queue holds (its default 1000 otherwise).
        ...(this.options.receiverQueueSize !== undefined && {
          pausedHoldLimit: Math.max(1, this.options.receiverQueueSize),
        }),
        receiveTimeoutMs: this.settings.receiveTimeoutMs,
        hasHandler: (urn) => routes.has(urn) || this.routes.handledBySibling(binding, urn, all),
        handlerTimeoutMs: (urn) => routes.get(urn)?.timeoutMs ?? this.settings.handlerTimeoutMs,
        logStackTraces: this.settings.logStackTraces,
        // A URN only a sibling subscription of this topic handles is that subscription's work: acknowledged here.
        dispatch: async (urn, envelope, message, requests) => {
          const route = routes.get(urn);
          if (route) await this.dispatch(route, urn, envelope, message, topic, requests);
        },
        hooks: this.hooks(),
        logger: this.consumerLogger(),
        onSettled: (event) => {
          this.metrics?.settled(event);
          this.events.emit('settled', event);
        },
        onLoopError: (error) => {
          this.logger.error(`receive on ${topic} failed: ${error.message}`);
          this.events.emit('error', error);
        },
      });
      return { consumer, owned, deferred, subscription: binding.subscription };
    } catch (error) {
      await Promise.allSettled(owned.map((producer) => producer.close()));
      throw error;
    }
  }

  /** The handler's own retriable rule, then the server's, then the built-in Nest rule (composed once per route). */
  private retriableRuleOf(route: Route | undefined): (error: unknown) => boolean {
    const cache = route ?? this;
    let rule = this.retriableRules.get(cache);
    if (!rule) {
      rule = composeRetriable([route?.isRetriable, this.options.isRetriable], isRetriableNestFailure, (problem) =>
        this.consumerLogger().warn(`${route?.name ?? 'the server'}: ${problem}`),
      );
      this.retriableRules.set(cache, rule);
    }
    return rule;
  }

  /** Which handlers can be called without Nest's pipeline: those with nothing for it to run. */
  private planDirectCalls(bindings: readonly Binding[]): void {
    for (const route of bindings.flatMap(({ routes }) => [...routes.values()])) {
      const { declaredAt } = route;
      if (!declaredAt || route.direct) continue;
      for (const relay of this.relays) {
        const call = relay.directCallOf(declaredAt);
        if (call) {
          route.direct = { call, relay };
          break;
        }
      }
    }
  }

  /** Calls a handler directly; a failure goes to the user's exception filters as through Nest's pipeline. */
  private static async callDirectly(
    { call, relay }: NonNullable<Route['direct']>,
    data: unknown,
    context: unknown,
  ): Promise<unknown> {
    try {
      const result = await call(data, context);
      return isObservable(result) ? await lastValueFrom(result, { defaultValue: undefined }) : result;
    } catch (error) {
      const host = new ExecutionContextHost([data, context]);
      host.setType('rpc');
      return relay.catch(error, host);
    }
  }

  private async dispatch(
    { handler, declaredAt, direct, schema, ownIdempotency }: Route,
    urn: string,
    envelope: Envelope,
    message: PulsarMessage,
    topic: string,
    requests: SettleRequests,
  ): Promise<void> {
    const context = contextFor([envelope, message, topic, urn], declaredAt, requests);
    const run = async (): Promise<void> => {
      try {
        const payload = handlerPayload(urn, envelope.data, schema, this.options.cipher);
        const result: unknown = direct
          ? await BabelPulsarServer.callDirectly(direct, payload, context)
          : await handler(payload, context);
        // Nest hands a failure to the exception filters, whose verdict is an Observable: an error (the failure
        // relay's, or a user filter's) or a completion (a user filter took the failure as handled).
        if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
      } catch (reported) {
        throw declaredAt ? failureOf(reported) : unrelayedFailureOf(reported);
      }
      // Asked for a retry or a dead letter: not handled, for what wraps the handler (idempotency, metrics, spans).
      if (requests.requested !== null) throw new RequestedSettlement(requests.requested);
    };
    // A handler with a store of its own (@Idempotent) is governed by that store alone.
    const idempotency = ownIdempotency ? undefined : this.options.idempotency;
    const work = async (): Promise<void> => {
      if (!idempotency) return run();
      if ((await runOnce(idempotency.store, envelope.meta?.id, run)) === 'duplicate')
        this.logger.log(`skipped ${urn} ${envelope.meta.id}: already handled (idempotency)`);
    };
    // The span helpers use the process-wide API once any component loaded it, so "off" must bypass them here.
    const api = this.settings.telemetry.tracing ? openTelemetry() : null;
    const traced = !(api && tracingObserved(api))
      ? work
      : () =>
          inProcessSpan(
            {
              urn,
              topic,
              envelope,
              properties: message.getProperties(),
              pulsarMessageId: messageIdText(message.getMessageId()),
            },
            work,
          );
    return this.metrics ? this.metrics.around(topic, urn, traced) : traced();
  }

  /** A pattern from @EventPattern / @MessagePattern: it runs, but without what @BabelHandler adds. */
  private warnForeignPattern(pattern: string, isEventHandler: boolean): void {
    if (this.options.startupWarnings === false || this.foreignPatterns.has(pattern)) return;
    this.foreignPatterns.add(pattern);
    this.logger.warn(
      `${isEventHandler ? '@EventPattern' : '@MessagePattern'}('${pattern}') is bound to BabelPulsarServer: use ` +
        `@BabelHandler('${pattern}') instead, or its failures are reported as "Internal server error" without ` +
        'their cause' +
        (isEventHandler ? '' : ' and its return value is dropped (BabelQueue has no replies)') +
        '. To keep a pattern for another transport off this one, give it that transport: ' +
        `@EventPattern('${pattern}', Transport.KAFKA)`,
    );
  }

  /** Several subscriptions of one topic and retry by re-publish: every subscription receives each retry copy. */
  private warnFanOut(bindings: readonly Binding[]): void {
    if (this.options.retry === 'nack' || this.options.startupWarnings === false) return;
    const byTopic = new Map<string, string[]>();
    for (const { topic, subscription } of bindings) {
      const key = fullTopic(topic);
      byTopic.set(key, [...(byTopic.get(key) ?? []), subscription]);
    }
    for (const [topic, subscriptions] of byTopic) {
      if (subscriptions.length < 2) continue;
      this.logger.warn(
        `${topic} is consumed through ${subscriptions.length} subscriptions (${subscriptions.join(', ')}) with ` +
          "retry 'republish': a retry copy goes back to the topic, so every one of them receives it (a handler " +
          "that already succeeded sees the message again). Use retry 'nack', idempotency, or a topic per subscription",
      );
    }
  }

  private hooks(): BabelQueueHooks {
    const { onError, onUnknownUrn, onRoutingMismatch, onDeadLetter } = this.options;
    return {
      // Every failure is logged by the consumer: one line per failed delivery (URN, id, attempt, outcome), and
      // a write the broker refuses once per message (repeats at debug), so the hook only forwards.
      onError: (error, envelope, message) => onError?.(error, envelope, message),
      ...(onUnknownUrn && { onUnknownUrn }),
      ...(onRoutingMismatch && { onRoutingMismatch }),
      ...(onDeadLetter && { onDeadLetter }),
    };
  }

  /** Where the consumers log: the `logger` option, else the server's Nest Logger. */
  private consumerLogger(): ConsumerLogger {
    return this.options.logger ?? this.logger;
  }

  private pollStatus(): void {
    const states = this.running.map(({ consumer }) => consumer.isConnected());
    const now = Date.now();
    this.running.forEach(({ consumer, subscription }, index) =>
      this.reportConnection(
        subscription === this.settings.subscription
          ? consumer.topic
          : `${consumer.topic} (subscription ${subscription})`,
        states[index]!,
        now,
      ),
    );
    if (states.includes(false)) this.setStatus('reconnecting');
    else if (this.running.some(({ consumer }) => consumer.overdueCount > 0)) this.setStatus('stalled');
    else if (this.running.length > 0 && this.running.every(({ consumer }) => consumer.isPaused))
      this.setStatus('paused');
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
    await this.brokerWait?.stop();
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
