import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { EventEmitter } from 'node:events';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { isObservable, lastValueFrom } from 'rxjs';
import { TopicConsumer, type BabelQueueHooks, type ConsumerLogger, type SettledEvent } from '../consumer/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarClientLike, PulsarMessage, PulsarProducer } from '../pulsar/client-types.js';
import { canPush, PushFeed } from '../consumer/push-feed.js';
import { toLibraryClient } from '../pulsar/native/adapter.js';
import { contextFor, type BabelContext } from './babel.context.js';
import { runOnce } from '../idempotency/run-once.js';
import { ConnectionWatch } from './connection-watch.js';
import { HandlerRoutes, type Binding, type Route } from './handler-routes.js';
import type { BabelHandlerExtras } from './babel-handler.decorator.js';
import { DEFAULT_PATTERN_DISCOVERY_MS } from './handler-options.js';
import { BABEL_HANDLER_EXTRAS, BABEL_OWN_IDEMPOTENCY, BABEL_TRANSPORT } from './constants.js';
import { handlerPayload } from '../schema/message-payload.js';
import { failureOf, unrelayedFailureOf } from './failure-classify.js';
import { OUTCOME_LINE_TAPS, OutcomeLineTaps } from '../consumer/outcome-lines.js';
import { assertSomethingListens, startupFailure } from '../pulsar/startup-failure.js';
import { positionAfterBrokerWait } from './late-subscription.js';
import { ATTACH_RELAY, type BabelFailureRelay, type RelayTarget } from './failure-relay.js';
import { subscriptionLine } from './startup-lines.js';
import { BrokerWait } from './broker-wait.js';
import { normalizeTopic } from '../pulsar/websocket/index.js';
import { messageIdText } from '../pulsar/message-id.js';
import { inProcessSpan, loadOpenTelemetry, openTelemetry, tracingObserved } from '../otel/tracing.js';
import { ConsumerMetrics } from '../otel/metrics.js';
import type { DeferredProducer, RefusedProducerState } from './refused-producer.js';
import { BindingProducers } from './binding-producers.js';
import { consumerConfigFor, deadLetterTopicOf } from './consumer-config.js';
import { isRetriableNestFailure } from './failure-classify.js';
import { raiseStandardError } from '../options/option-table.js';
import {
  checkDelayable,
  isProducer,
  resolveServerOptions,
  type BabelPulsarServerOptions,
  type ResolvedServerOptions,
} from './server-options.js';
import { keepDeadLetters } from '../redrive/keep-dead-letters.js';
import type { PulsarConsumerOptions } from '../pulsar/client-options.js';
import { bindingConsumerOptions } from './binding-consumer-options.js';
import { clientNameOf, producerOptionsFor } from './producer-settings.js';
import { BatchDispatch } from './batch-dispatch.js';
import { PatternWatch } from './pattern-watch.js';
import { topicListerOf } from '../pulsar/topic-lister.js';
import type { BabelBatchContext } from './babel-batch.context.js';
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
const fullTopic = (topic: string): string => {
  try {
    return normalizeTopic(topic);
  } catch {
    return topic;
  }
};

/** The start-up line of a pattern binding: what it matched and how often it looks again. */
function patternLine(watch: PatternWatch, binding: Binding): string {
  const topics = watch.topics;
  return (
    `consuming ${topics.length} topic(s) matching ${watch.pattern.label} through subscription ` +
    `${binding.subscription}${topics.length > 0 ? ` (${topics.join(', ')})` : ''}; new matching topics are looked ` +
    `for every ${binding.pattern!.discoveryMs} ms`
  );
}

/** A topic with batch handlers takes in at least a full batch at once, or no batch would ever fill. */
function batchConcurrency(concurrency: number, routes: ReadonlyMap<string, Route>): number {
  return Math.max(concurrency, ...[...routes.values()].map((route) => route.batch?.maxMessages ?? 0));
}

/** A batch member's time-out also covers the wait for its batch to fill. */
function batchTimeoutMs(route: Route | undefined, serverTimeoutMs: number): number {
  const timeoutMs = route?.timeoutMs ?? serverTimeoutMs;
  return route?.batch && timeoutMs > 0 ? timeoutMs + route.batch.maxWaitMs : timeoutMs;
}

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
  /** Where the testing kit takes the failure and dead-letter lines of the messages it published. */
  readonly [OUTCOME_LINE_TAPS] = new OutcomeLineTaps();

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
  /** The Pulsar consumer settings of each subscription, merged and checked at start. */
  private readonly consumerOptions = new Map<Binding, PulsarConsumerOptions>();
  /** Retries the subscriptions while the broker did not answer at start (brokerAtStart: 'optional'). */
  private brokerWait: BrokerWait | null = null;
  /** The topic patterns' discoveries (docs/pulsar-features.md#topic-patterns), by pattern binding. */
  private readonly patterns = new Map<Binding, PatternWatch>();
  /** Set once consuming started: a topic a pattern finds later starts consuming at once. */
  private consuming = false;
  /** The batches of the batch handlers (docs/pulsar-features.md#batch-handlers). */
  private readonly batches = new BatchDispatch((route, payloads, context) => this.callBatch(route, payloads, context));
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
    return this.settings.name;
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
    if (babelExtras?.connection !== this.settings.name) return;
    if (!babelExtras) this.warnForeignPattern(urn, isEventHandler);
    const name = babelExtras?.handler ?? 'an unnamed handler';
    const { maxAttempts, retryPolicy, timeoutMs, topic, subscription, owner, method, schema, consumerOptions } =
      babelExtras ?? {};
    const { batch, topicsPattern, patternDiscoveryMs, isRetriable } = babelExtras ?? {};
    if (retryPolicy)
      checkDelayable(
        this.settings.retry === 'nack',
        this.settings.subscriptionType,
        `${name} retryPolicy`,
        raiseStandardError,
      );
    if ((topic !== undefined || topicsPattern !== undefined) && isProducer(this.settings.retry)) {
      throw new TypeError(
        `${name} names its own ${topic !== undefined ? 'topic' : 'topicsPattern'}, but options.retry is a single ` +
          "producer: a retry goes back to its own topic; use retry 'republish'",
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
        ...(consumerOptions !== undefined && { consumerOptions }),
        ...(isRetriable !== undefined && { isRetriable }),
        ...(extras[BABEL_OWN_IDEMPOTENCY] === true && { ownIdempotency: true }),
        ...(batch !== undefined && { batch }),
        ...((maxAttempts !== undefined || retryPolicy !== undefined) && {
          policy: {
            ...(maxAttempts !== undefined && { maxAttempts }),
            ...(retryPolicy !== undefined && { retryPolicy }),
          },
        }),
      },
      {
        ...(topic !== undefined && { topic }),
        ...(subscription !== undefined && { subscription }),
        ...(topicsPattern !== undefined && {
          pattern: { pattern: topicsPattern, discoveryMs: patternDiscoveryMs ?? DEFAULT_PATTERN_DISCOVERY_MS },
        }),
      },
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
    // OpenTelemetry (an optional peer) is imported once; without it there are no spans and no metrics. With
    // both signals switched off it is not imported at all.
    const { tracing, metrics } = this.settings.telemetry;
    if ((tracing || metrics) && (await loadOpenTelemetry()) && metrics) this.metrics ??= ConsumerMetrics.create();
    this.warnFanOut(this.routes.subscribed());
    this.planDirectCalls(this.routes.subscribed());
    // Before any subscription: a setting the client cannot honour fails the start whatever brokerAtStart says.
    for (const binding of this.routes.subscribed()) {
      const client = clientNameOf(this.settings.client);
      this.consumerOptions.set(binding, bindingConsumerOptions(binding, this.settings.consumerOptions, client));
    }
    try {
      await assertSomethingListens(this.options.client);
      await this.subscribeAll();
    } catch (error) {
      if (this.settings.brokerAtStart === 'required') throw startupFailure(error, this.options.client);
      this.brokerWait = this.waitForBroker(error);
      return;
    }
    this.startConsuming();
  }

  /** Subscribes every binding; on a failure releases what was created and rejects. */
  private async subscribeAll(initialPosition?: 'Latest' | 'Earliest'): Promise<void> {
    try {
      const bindings = this.routes.subscribed();
      for (const binding of bindings) {
        if (binding.pattern) await this.watchPattern(binding, bindings);
        else this.running.push(await this.startBinding(binding, bindings, initialPosition));
      }
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
          await this.subscribeAll(positionAfterBrokerWait(this.settings.subscriptionInitialPosition));
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
    this.consuming = true;
    for (const resources of this.running) {
      if (this.pausedKeys.has(this.keyOf(resources))) void resources.consumer.pause();
      resources.consumer.start();
    }
    for (const binding of this.routes.subscribed()) {
      const watch = this.patterns.get(binding);
      if (watch) this.consumerLogger().log(patternLine(watch, binding));
      else
        this.consumerLogger().log(subscriptionLine(fullTopic(binding.topic), binding, this.settings.subscriptionType));
    }
    for (const watch of this.patterns.values()) watch.watch();
    this.setStatus('connected');
    this.statusTimer = setInterval(() => this.pollStatus(), STATUS_POLL_MS);
    this.statusTimer.unref();
    this.refreshStatus();
  }

  /**
   * Consumes the topics a pattern matches now, each as a topic of its own, and keeps looking for new ones once
   * consuming starts. The namespace is listed through the broker's admin API (neither client can list topics).
   */
  private async watchPattern(binding: Binding, all: readonly Binding[]): Promise<void> {
    const { pattern } = binding.pattern!;
    const list = topicListerOf(this.settings.client);
    if (!list) {
      const names = [...binding.routes.values()].map(({ name }) => name).join(', ');
      throw new TypeError(
        `${names}: topicsPattern ${pattern.label} needs the broker's admin API to list the topics of ` +
          `${pattern.tenant}/${pattern.namespace}, and this client was not created by the library: give ` +
          'BabelQueueModule a serviceUrl, or create the client with createPulsarClient or new PulsarWebSocketClient',
      );
    }
    const deadLetter = this.settings.deadLetter ?? true;
    const ownDeadLetterTopic =
      deadLetter === true || deadLetter === false
        ? undefined
        : fullTopic(isProducer(deadLetter) ? deadLetter.getTopic() : deadLetter.trim());
    const watch = new PatternWatch(binding as Binding & { pattern: NonNullable<Binding['pattern']> }, {
      list,
      excluded: (topic) => topic === ownDeadLetterTopic,
      taken: (topic, subscription) =>
        all.some(
          (other) => !other.pattern && other.subscription === subscription && fullTopic(other.topic) === topic,
        ) ||
        this.running.some((other) => other.subscription === subscription && fullTopic(other.consumer.topic) === topic),
      consume: async (found, late) => {
        // Released with the others on close: stop() waits for a discovery under way before releasing.
        const resources = await this.startBinding(found, all, late ? 'Earliest' : undefined);
        this.running.push(resources);
        if (this.consuming) resources.consumer.start();
      },
      logger: this.consumerLogger(),
    });
    await watch.start();
    this.patterns.set(binding, watch);
  }

  private async startBinding(
    binding: Binding,
    all: readonly Binding[],
    initialPosition?: 'Latest' | 'Earliest',
  ): Promise<TopicResources> {
    const { topic, routes } = binding;
    const { client, settings } = this;
    const producers = new BindingProducers(
      topic,
      client,
      settings.producers,
      this.consumerLogger(),
      fullTopic,
      (target) => producerOptionsFor(settings.producerSettings, target),
    );
    try {
      const { retry, deadLetter } = settings;
      const retryProducer =
        retry === 'nack' ? null : isProducer(retry) ? retry : await producers.acquire(topic, 'retry copies');
      const deadLetterTopic = deadLetterTopicOf(topic, deadLetter);
      const deadLetterProducer = isProducer(deadLetter)
        ? deadLetter
        : deadLetterTopic === null
          ? null
          : await producers.acquire(deadLetterTopic, 'dead-letter records');
      if (deadLetterTopic !== null)
        await keepDeadLetters(client, deadLetterTopic, (warning) => this.consumerLogger().warn(warning));
      // A client that pushes (the native listener) saves a receive() round trip per message.
      const feed = canPush(client) ? new PushFeed() : undefined;
      const subscription = consumerConfigFor(binding, settings, this.consumerOptions.get(binding), initialPosition);
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
        concurrency: batchConcurrency(this.settings.concurrency, routes),
        // Held while paused at most what the client's own receiver queue holds (its default 1000 otherwise).
        ...(this.settings.receiverQueueSize !== undefined && {
          pausedHoldLimit: Math.max(1, this.settings.receiverQueueSize),
        }),
        receiveTimeoutMs: this.settings.receiveTimeoutMs,
        hasHandler: (urn) => routes.has(urn) || this.routes.handledBySibling(binding, urn, all),
        handlerTimeoutMs: (urn) => batchTimeoutMs(routes.get(urn), this.settings.handlerTimeoutMs),
        logStackTraces: this.settings.logStackTraces,
        outcomeLines: this[OUTCOME_LINE_TAPS],
        // A URN only a sibling subscription of this topic handles is that subscription's work: acknowledged here.
        dispatch: async (urn, envelope, message, requests) => {
          const route = routes.get(urn);
          if (route) await this.dispatch(route, urn, envelope, message, topic, requests, binding.reportedAs);
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
      return { consumer, owned: producers.owned, deferred: producers.deferred, subscription: binding.subscription };
    } catch (error) {
      await producers.closeOwned();
      throw error;
    }
  }

  /** The handler's own retriable rule, then the server's, then the built-in Nest rule (composed once per route). */
  private retriableRuleOf(route: Route | undefined): (error: unknown) => boolean {
    const cache = route ?? this;
    let rule = this.retriableRules.get(cache);
    if (!rule) {
      rule = composeRetriable([route?.isRetriable, this.settings.isRetriable], isRetriableNestFailure, (problem) =>
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
    original: Route,
    urn: string,
    envelope: Envelope,
    message: PulsarMessage,
    topic: string,
    requests: SettleRequests,
    reportedTopic = topic,
  ): Promise<void> {
    const { declaredAt, schema, ownIdempotency, batch } = original;
    const context = contextFor([envelope, message, reportedTopic, urn], declaredAt, requests);
    const run = async (): Promise<void> => {
      let payload: unknown;
      try {
        payload = handlerPayload(urn, envelope.data, schema, this.settings.cipher);
      } catch (reported) {
        throw declaredAt ? failureOf(reported) : unrelayedFailureOf(reported);
      }
      if (batch) await this.batches.add(original, { payload, context });
      else await BabelPulsarServer.invoke(original, payload, context);
      // Asked for a retry or a dead letter: not handled, for what wraps the handler (idempotency, metrics, spans).
      if (requests.requested !== null) throw new RequestedSettlement(requests.requested);
    };
    // A handler with a store of its own (@Idempotent) is governed by that store alone.
    const idempotency = ownIdempotency ? undefined : this.settings.idempotency;
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

  /** Calls a handler (directly or through Nest's pipeline); rejects with the failure the settlement classifies. */
  private static async invoke(
    { handler, declaredAt, direct }: Route,
    payload: unknown,
    context: BabelContext | BabelBatchContext,
  ): Promise<void> {
    try {
      const result: unknown = direct
        ? await BabelPulsarServer.callDirectly(direct, payload, context)
        : await handler(payload, context);
      // Nest hands a failure to the exception filters, whose verdict is an Observable: an error (the failure
      // relay's, or a user filter's) or a completion (a user filter took the failure as handled).
      if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
    } catch (reported) {
      throw declaredAt ? failureOf(reported) : unrelayedFailureOf(reported);
    }
  }

  /** One call of a batch handler with its batch (each message is then settled from the context's report). */
  private callBatch(route: Route, payloads: unknown[], context: BabelBatchContext): Promise<void> {
    return BabelPulsarServer.invoke(route, payloads, context);
  }

  /** A pattern from @EventPattern / @MessagePattern: it runs, but without what @BabelHandler adds. */
  private warnForeignPattern(pattern: string, isEventHandler: boolean): void {
    if (!this.settings.startupWarnings || this.foreignPatterns.has(pattern)) return;
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
    if (this.settings.retry === 'nack' || !this.settings.startupWarnings) return;
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
    const { onError, onUnknownUrn, onRoutingMismatch, onDeadLetter } = this.settings;
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
    return this.settings.logger ?? this.logger;
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
    // Waiting batches are handed over at once, so their messages settle within the shutdown time-out.
    this.batches.close();
    await this.releaseAll();
    this.setStatus('closed');
  }

  private async releaseAll(): Promise<void> {
    // No pattern subscribes a new topic from here on.
    const watches = [...this.patterns.values()];
    this.patterns.clear();
    await Promise.all(watches.map((watch) => watch.stop()));
    const running = this.running.splice(0);
    await Promise.all(running.map(({ consumer }) => consumer.stop(this.settings.shutdownTimeoutMs)));
    // Producers close only after every in-flight settlement had its chance to write.
    await Promise.allSettled(running.flatMap(({ owned }) => owned.map((producer) => producer.close())));
  }
}
