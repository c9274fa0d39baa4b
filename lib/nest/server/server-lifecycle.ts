// The running half of BabelPulsarServer: its subscriptions, planned once, opened and consumed at start (or once
// the broker answers), with their circuit breakers, status, metrics and lag gauges, and the stop that closes them in
// order. The server keeps Nest's contract and the handlers; this keeps what runs.
import type { EventEmitter } from 'node:events';
import type { ConsumerLogger } from '../../consumer/index.js';
import type { OutcomeLineTaps } from '../../consumer/outcome-lines.js';
import { ConsumerMetrics } from '../../otel/metrics.js';
import type { LagGauges } from '../../otel/subscription-lag.js';
import { loadOpenTelemetry } from '../../otel/tracing.js';
import type { LibraryClient } from '../../pulsar/client-types.js';
import { LazyPulsarClient } from '../../pulsar/lazy-client.js';
import { assertSomethingListens, startupFailure } from '../../pulsar/startup-failure.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { waitForBroker, type BrokerWait } from '../client/broker-wait.js';
import type { HandlerDispatch } from './handler-dispatch.js';
import type { Binding } from './handler-routes.js';
import { startLagGauges } from './lag-targets.js';
import { SubscriptionDispatchRates } from './dispatch-rates.js';
import type { ReplyProducers } from './reply-producers.js';
import { consumerHooksOf, type ResolvedServerOptions } from './server-options.js';
import { StatusMonitor, type BabelServerStatus } from './status-monitor.js';
import type { Subscription } from './subscription.js';
import { SubscriptionBreakers } from './subscription-breaker.js';
import { openSubscription } from './subscription-runner.js';
import { SubscriptionSet } from './subscription-set.js';

export interface ServerLifecycleDeps {
  settings: ResolvedServerOptions;
  client: LibraryClient;
  /** The client as the user gave it: start-up errors name its URL; the module's is created on first need. */
  givenClient: unknown;
  logger: ConsumerLogger;
  /** Where the testing kit takes the outcome lines of the messages it published. */
  outcomeLines: OutcomeLineTaps;
  dispatcher: HandlerDispatch;
  replies: ReplyProducers;
  /** The server's `settled` and `error` events. */
  events: EventEmitter;
  publishStatus(status: BabelServerStatus): void;
}

export class ServerLifecycle {
  /** Planned once, on the first listen() or pause(): from then on, no handler can be added. */
  subscriptions: SubscriptionSet | null = null;
  readonly monitor: StatusMonitor;
  private stopping = false;
  private metrics: ConsumerMetrics | undefined;
  /** Retries the subscriptions while the broker did not answer at start (brokerAtStart: 'optional'). */
  private brokerWait: BrokerWait | null = null;
  /** The circuit breaker of each subscription that has one (the `circuitBreaker` option, server's or handlers'). */
  private readonly breakers: SubscriptionBreakers;
  /** The lag gauges (the `lagGauges` option), from the first start. */
  private lagGauges: LagGauges | null = null;
  /** The broker's dispatch-rate policy of each subscription opened (the `dispatchRate` option). */
  private readonly dispatchRates: SubscriptionDispatchRates | null;

  constructor(private readonly deps: ServerLifecycleDeps) {
    const { settings, logger } = deps;
    this.dispatchRates = settings.dispatchRate
      ? new SubscriptionDispatchRates({ setting: settings.dispatchRate, client: deps.givenClient as object, logger })
      : null;
    this.breakers = new SubscriptionBreakers({
      hold: async (subscription, held) => {
        await this.subscriptions?.hold(subscription, held);
        this.monitor.refresh();
      },
      logger,
    });
    this.monitor = new StatusMonitor({
      running: () => this.subscriptions?.running ?? [],
      defaultSubscription: settings.subscription,
      logger,
      publish: deps.publishStatus,
    });
  }

  /** The consumer metrics, once OpenTelemetry was loaded with metrics on. */
  get consumerMetrics(): ConsumerMetrics | undefined {
    return this.metrics;
  }

  /** The subscriptions, planned from `bindings` on first use. */
  planned(bindings: () => readonly Binding[]): SubscriptionSet {
    this.subscriptions ??= SubscriptionSet.plan(bindings(), this.deps.settings, this.deps.logger, (...open) =>
      this.open(...open),
    );
    return this.subscriptions;
  }

  /** Opens every planned subscription and starts consuming (see openAndConsume). */
  async start(subscriptions: SubscriptionSet): Promise<void> {
    const { settings, logger } = this.deps;
    // OpenTelemetry (an optional peer) is imported once; without it there are no spans and no metrics. With
    // both signals switched off it is not imported at all.
    const { tracing, metrics } = settings.telemetry;
    if ((tracing || metrics) && (await loadOpenTelemetry()) && metrics) this.metrics ??= ConsumerMetrics.create();
    if (settings.retry !== 'nack' && settings.retry !== 'retry-topic' && settings.startupWarnings)
      for (const warning of fanOutWarnings(subscriptions.planned)) logger.warn(warning);
    this.brokerWait = await this.openAndConsume(subscriptions);
    this.lagGauges ??= startLagGauges(settings.lagGauges, () => this.subscriptions?.running ?? [], logger);
  }

  /** Stops the wait for the broker, the breakers and gauges, then every consumer, then the reply producers. */
  async stop(starting: Promise<void> | null): Promise<void> {
    this.stopping = true;
    await this.brokerWait?.stop();
    // A start under way finishes first, so nothing it opens stays open.
    await starting?.catch(() => undefined);
    this.monitor.stop();
    this.breakers.close();
    this.lagGauges?.stop();
    // Waiting batches are handed over at once, so their messages settle within the shutdown time-out.
    this.deps.dispatcher.close();
    await this.subscriptions?.close(this.deps.settings.shutdownTimeoutMs);
    await this.deps.replies.close();
    this.monitor.set('closed');
  }

  /**
   * Opens every subscription and starts consuming. A broker that does not answer fails the start with one line
   * naming the URL and the likely cause, or with `brokerAtStart: 'optional'` is waited for: the returned wait
   * subscribes (new subscriptions at the earliest message) and starts consuming once it answers.
   */
  private async openAndConsume(subscriptions: SubscriptionSet): Promise<BrokerWait | null> {
    const { settings, givenClient, logger } = this.deps;
    const openAll = async (initialPosition?: 'Earliest' | 'Latest') => {
      try {
        await subscriptions.open(settings.shutdownTimeoutMs, initialPosition);
      } catch (error) {
        this.monitor.set('disconnected');
        throw error;
      }
    };
    const consume = () => {
      if (this.stopping) return;
      subscriptions.startConsuming();
      this.monitor.start();
    };
    // The module's client is created here, on first need. Creating it connects nothing; it fails only when the
    // client cannot be made (pulsar-client not installed), which no wait for the broker would cure.
    if (givenClient instanceof LazyPulsarClient) {
      try {
        await givenClient.open();
      } catch (error) {
        throw startupFailure(error, givenClient);
      }
    }
    try {
      await assertSomethingListens(givenClient);
      await openAll();
    } catch (error) {
      if (settings.brokerAtStart === 'required') throw startupFailure(error, givenClient);
      const topics = settings.topics.map(fullTopicName).join(', ');
      return waitForBroker(topics, logger, error, async () => {
        // Subscriptions made only after waiting for the broker start at the earliest message the topic still
        // stores: the app's publisher (connected on its own) may have published before they existed, and `Latest`
        // would never see it. An existing subscription keeps its position (Pulsar applies it only on creation).
        await openAll(settings.subscriptionInitialPosition ?? 'Earliest');
        consume();
      });
    }
    consume();
    return null;
  }

  /** Opens a subscription's consumers, then sets their dispatch rate before they start consuming. */
  private async open(subscription: Subscription, initialPosition?: 'Earliest' | 'Latest') {
    const opened = await this.openConsumers(subscription, initialPosition);
    await this.dispatchRates?.apply(opened);
    return opened;
  }

  private openConsumers(subscription: Subscription, initialPosition?: 'Earliest' | 'Latest') {
    const { settings, logger, dispatcher, events } = this.deps;
    const breaker = this.breakers.of(subscription);
    return openSubscription(
      subscription,
      {
        client: this.deps.client,
        settings,
        logger,
        hooks: consumerHooksOf(settings),
        outcomeLines: this.deps.outcomeLines,
        handledBySibling: (subscription, urn) => this.subscriptions?.handledBySibling(subscription, urn) ?? false,
        run: (subscription, route, urn, envelope, message, requests) =>
          dispatcher.dispatch(route, urn, envelope, message, subscription.topic, requests, {
            reportedTopic: subscription.reportedTopic,
            subscription: subscription.name,
          }),
        reply: (topic, message) => this.deps.replies.send(topic, message),
        onSettled: (event) => {
          this.metrics?.settled(event);
          breaker?.settled(event);
          // A plain copy: the consumer's event reads its message id only when asked (see settledEvent).
          if (events.listenerCount('settled') > 0) events.emit('settled', { ...event });
        },
        onLoopError: (subscription, error) => {
          logger.error(`receive on ${subscription.topic} failed: ${error.message}`);
          events.emit('error', error);
        },
      },
      initialPosition,
    );
  }
}

/** Several subscriptions of one topic and retry by re-publish: every subscription receives each retry copy (pure). */
export function fanOutWarnings(subscriptions: readonly Subscription[]): string[] {
  const byTopic = new Map<string, string[]>();
  for (const { fullTopic, name: subscription } of subscriptions)
    byTopic.set(fullTopic, [...(byTopic.get(fullTopic) ?? []), subscription]);
  return [...byTopic]
    .filter(([, names]) => names.length > 1)
    .map(
      ([topic, names]) =>
        `${topic} is consumed through ${names.length} subscriptions (${names.join(', ')}) with ` +
        "retry 'republish': a retry copy goes back to the topic, so every one of them receives it (a handler " +
        "that already succeeded sees the message again). Use retry 'retry-topic': each subscription's retry " +
        'copies then go to its own <topic>.<subscription>.retry, which no other subscription reads',
    );
}
