import { TopicConsumer, type BabelQueueHooks, type ConsumerLogger, type SettledEvent } from '../../consumer/index.js';
import type { ReplySender, Resolution, ResolvedHandler } from '../../consumer/processor-context.js';
import type { SettleRequests } from '../../consumer/settle-request.js';
import type { Envelope } from '../../envelope/index.js';
import type { OutcomeLineTaps } from '../../consumer/outcome-lines.js';
import { PushFeed } from '../../consumer/push-feed.js';
import type {
  LibraryClient,
  PulsarConsumer,
  PulsarConsumerConfig,
  PulsarMessage,
  PulsarProducer,
} from '../../pulsar/client-types.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { keepDeadLetters } from '../../consumer/keep-dead-letters.js';
import { producerOptionsFor } from '../client/producer-settings.js';
import { BindingProducers } from './binding-producers.js';
import type { Route } from './handler-routes.js';
import type { DeferredProducer } from './refused-producer.js';
import { isProducer, type ResolvedServerOptions } from './server-options.js';
import type { Subscription } from './subscription.js';
import { SettlementCounts } from '../../consumer/settlement-counts.js';

/** A subscription with its consumer open: what the server runs, pauses, describes and closes. */
export interface RunningSubscription {
  readonly subscription: Subscription;
  readonly consumer: TopicConsumer;
  /** The topic this consumer reads: the subscription's topic, or its retry topic. */
  readonly readsFrom: string;
  /** Producers opened for this subscription (closed with it). */
  readonly owned: PulsarProducer[];
  /** Retry / dead-letter producers the broker refused for lack of permission (retried on each write). */
  readonly deferred: DeferredProducer[];
  /** What this consumer settled since it opened. */
  readonly counts: SettlementCounts;
}

/** What opening a subscription needs from the server. */
export interface SubscriptionRunnerDeps {
  client: LibraryClient;
  settings: ResolvedServerOptions;
  logger: ConsumerLogger;
  hooks: BabelQueueHooks;
  /** Where the testing kit takes the outcome lines of the messages it published. */
  outcomeLines?: OutcomeLineTaps;
  /** True when another subscription of the same topic handles the URN (it runs it; this one acknowledges it). */
  handledBySibling(subscription: Subscription, urn: string): boolean;
  /** Runs one handler of this subscription. */
  run(
    subscription: Subscription,
    route: Route,
    urn: string,
    envelope: Envelope,
    message: PulsarMessage,
    requests: SettleRequests,
  ): Promise<unknown>;
  /** Sends the replies of requests handled here. */
  reply?: ReplySender;
  onSettled(event: SettledEvent): void;
  onLoopError(subscription: Subscription, error: Error): void;
}

/**
 * Opens the producers and the consumers of one subscription (nothing is left open when this rejects): one
 * consumer on its topic and, with a retry topic of its own, one on that, both settling as the topic's consumer
 * (their retry copies go to the retry topic, their dead-letter records name the topic).
 */
export async function openSubscription(
  subscription: Subscription,
  deps: SubscriptionRunnerDeps,
  /** Where the subscription starts if Pulsar creates it now (overrides the configured position). */
  initialPosition?: 'Earliest' | 'Latest',
): Promise<RunningSubscription[]> {
  const { client, settings, logger } = deps;
  const topic = subscription.topic;
  const producers = new BindingProducers(topic, client, settings.producers, logger, fullTopicName, (target) =>
    producerOptionsFor(settings.producerSettings, target),
  );
  const opened: PulsarConsumer[] = [];
  try {
    const { retry, deadLetter } = settings;
    const retryProducer =
      retry === 'nack'
        ? null
        : isProducer(retry)
          ? retry
          : await producers.acquire(subscription.retryTopic ?? topic, 'retry copies');
    const deadLetterProducer = isProducer(deadLetter)
      ? deadLetter
      : subscription.deadLetterTopic === null
        ? null
        : await producers.acquire(subscription.deadLetterTopic, 'dead-letter records');
    if (subscription.deadLetterTopic !== null)
      await keepDeadLetters(client, subscription.deadLetterTopic, (warning) => logger.warn(warning));
    const settlement = { retryProducer, deadLetterProducer };
    const resolve = resolverOf(subscription, deps);
    const reads = [{ from: topic, config: withPosition(subscription.consumer, initialPosition) }];
    // The retry topic holds nothing but this subscription's copies: a new subscription on it reads them all.
    if (subscription.retryTopic !== null)
      reads.push({
        from: subscription.retryTopic,
        config: { ...subscription.consumer, topic: subscription.retryTopic, subscriptionInitialPosition: 'Earliest' },
      });
    const running: RunningSubscription[] = [];
    for (const { from, config } of reads) {
      const feed = new PushFeed();
      const pulsarConsumer = await client.subscribePush(config, feed.deliver, feed.room);
      opened.push(pulsarConsumer);
      const counts = new SettlementCounts();
      const counted = {
        ...deps,
        onSettled: (event: SettledEvent) => {
          counts.count(event);
          deps.onSettled(event);
        },
      };
      const consumer = topicConsumer(subscription, counted, pulsarConsumer, feed, settlement, resolve);
      // The producers belong to the first entry alone, so that they are closed once.
      running.push(
        running.length === 0
          ? { subscription, consumer, readsFrom: from, owned: producers.owned, deferred: producers.deferred, counts }
          : { subscription, consumer, readsFrom: from, owned: [], deferred: [], counts },
      );
    }
    return running;
  } catch (error) {
    await Promise.allSettled(opened.map((consumer) => consumer.close()));
    await producers.closeOwned();
    throw error;
  }
}

function withPosition(config: PulsarConsumerConfig, initialPosition: 'Earliest' | 'Latest' | undefined) {
  return initialPosition ? { ...config, subscriptionInitialPosition: initialPosition } : config;
}

/** The intake of one Pulsar consumer of a subscription: settles as the subscription's topic does. */
function topicConsumer(
  subscription: Subscription,
  deps: SubscriptionRunnerDeps,
  pulsarConsumer: PulsarConsumer,
  // The client's intake hands each message over as it comes.
  feed: PushFeed,
  producers: { retryProducer: PulsarProducer | null; deadLetterProducer: PulsarProducer | null },
  resolve: (urn: string) => Resolution,
): TopicConsumer {
  const { settings, logger } = deps;
  return new TopicConsumer({
    topic: subscription.topic,
    consumer: pulsarConsumer,
    feed,
    ...producers,
    policy: subscription.policy,
    resolve,
    delayedRetryRefusal: subscription.intake.delayRefusal,
    concurrency: subscription.intake.concurrency,
    ordering: subscription.intake.ordering,
    blockExhausted: subscription.intake.onExhausted === 'block-key',
    ...(subscription.intake.maxOverdue !== undefined && { maxOverdue: subscription.intake.maxOverdue }),
    ...(subscription.intake.pausedHoldLimit !== undefined && { pausedHoldLimit: subscription.intake.pausedHoldLimit }),
    unknownUrn: subscription.unknownUrn,
    pace: subscription.pace,
    ...(subscription.circuitBreaker !== undefined && { holdLastAttempts: () => subscription.tripped }),
    logStackTraces: settings.logStackTraces,
    ...(deps.reply && { reply: deps.reply }),
    hooks: deps.hooks,
    ...(deps.outcomeLines && { outcomeLines: deps.outcomeLines }),
    logger,
    onSettled: deps.onSettled,
    onLoopError: (error) => deps.onLoopError(subscription, error),
  });
}

/**
 * The subscription's answer to "who runs this URN?", asked once per message: each of its handlers with its
 * settings, made once here; else a sibling subscription of the topic, asked only for a URN none of these handles
 * (a topic a pattern finds later may bring one).
 */
function resolverOf(subscription: Subscription, deps: SubscriptionRunnerDeps): (urn: string) => Resolution {
  const handlers = new Map<string, ResolvedHandler>();
  for (const [urn, settings] of subscription.handlers) {
    const route = subscription.routes.get(urn)!;
    handlers.set(urn, {
      ...settings,
      run: (envelope, message, requests) => deps.run(subscription, route, urn, envelope, message, requests),
    });
  }
  return (urn) => handlers.get(urn) ?? (deps.handledBySibling(subscription, urn) ? 'sibling' : null);
}
