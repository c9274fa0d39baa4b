import type { ConsumerLogger, SettledEvent } from '../../consumer/index.js';
import type { RefusedProducerState } from './refused-producer.js';
import type { TopicLister } from '../../pulsar/topic-lister.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import type { SubscriptionType } from '../../pulsar/client-types.js';
import { PatternWatch } from './pattern-watch.js';
import { deadLetterTopicOf, retryTopicOf } from './consumer-config.js';
import type { Binding } from './handler-routes.js';
import { patternListerFor, singleDeadLetterTopic } from './pattern-watch.js';
import type { ResolvedServerOptions } from './server-options.js';
import { planSubscriptions } from './subscription-plan.js';
import { selectSubscriptions, type SubscriptionTarget } from './pause-control.js';
import type { Subscription, SubscriptionPattern } from './subscription.js';
import type { RunningSubscription } from './subscription-runner.js';

/** One consumer as `server.describe()` reports it; the health check reports the same, less `connected`. */
export interface SubscriptionState {
  /** The topic as the server consumes it (full name), or a pattern's label. */
  topic: string;
  /** The subscription's name. */
  subscription: string;
  /** The consumer of a subscription's own retry topic: the topic it retries (pause and resume name that one). */
  retryOf?: string;
  /** The subscription's type. */
  type: SubscriptionType;
  /** Handlers running now. */
  active: number;
  /** Handlers past their time-out that still run (a stall). */
  overdue: number;
  /**
   * With `ordering: 'key'` only: messages taken in that wait behind their key, for their retry in place or for a
   * slot (docs/scale.md#per-key-order).
   */
  waitingInLanes?: number;
  /**
   * With `onExhausted: 'block-key'` only: the keys whose message failed for good and waits, unacknowledged, for
   * `server.unblock()` (docs/scale.md#per-key-order).
   */
  blockedKeys?: string[];
  /** Its consumer is connected to the broker. */
  connected: boolean;
  /** Paused by pause(): no new message is handled until resume(). */
  paused: boolean;
  /** Its circuit breaker is open (paused by it) or probing (docs/retries.md#circuit-breaker). */
  tripped: boolean;
  /** The topic's retry or dead-letter producers the broker refuses for lack of permission. */
  refused: RefusedProducerState[];
  /** Deliveries acknowledged since the consumer opened: handled, or needing no handler (a duplicate, say). */
  handled: number;
  /** Deliveries that failed since the consumer opened: retried, dead-lettered, negatively acknowledged, dropped. */
  failed: number;
}

export interface SubscriptionSetDeps {
  /** Opens a subscription; `initialPosition` overrides where a new one starts (after a wait for the broker). */
  open(subscription: Subscription, initialPosition?: 'Earliest' | 'Latest'): Promise<RunningSubscription[]>;
  /** Lists a pattern's namespace; throws (naming the handlers) when this client cannot. */
  listerFor(pattern: Subscription): TopicLister;
  /** A topic no pattern consumes (the server's single dead-letter topic). */
  excluded(fullTopic: string): boolean;
  /** Where the dead letters of a topic a pattern found go. */
  deadLetterTopicOf(fullTopic: string): string | null;
  /** The retry topic of a topic a pattern found, for its subscription (null: retries go back to the topic). */
  retryTopicOf(fullTopic: string, subscription: string): string | null;
  subscriptionType: SubscriptionType;
  logger: ConsumerLogger;
}

type PatternSubscription = Subscription & { pattern: SubscriptionPattern };

/**
 * The server's subscriptions as they run: the planned ones, and those each pattern derives for the topics it
 * finds. Opening, consuming, pausing, describing and closing all go through here, so a feature that applies to
 * a subscription applies to every one of them, however it came to be consumed.
 */
export class SubscriptionSet {
  private readonly runningList: RunningSubscription[] = [];
  private readonly watches: PatternWatch[] = [];
  private consuming = false;
  private closed = false;
  /** Where subscriptions made from now on start (set once the server waited for the broker). */
  private initialPosition: 'Earliest' | 'Latest' | undefined;

  constructor(
    readonly planned: readonly Subscription[],
    private readonly deps: SubscriptionSetDeps,
  ) {}

  /** The subscriptions of a server's bindings, planned now (see planSubscriptions), opened with `open`. */
  static plan(
    bindings: readonly Binding[],
    settings: ResolvedServerOptions,
    logger: ConsumerLogger,
    open: SubscriptionSetDeps['open'],
  ): SubscriptionSet {
    return new SubscriptionSet(
      planSubscriptions(bindings, settings, (problem) => logger.warn(problem)),
      {
        open,
        listerFor: (subscription) => patternListerFor(settings.client, subscription),
        excluded: (topic) => topic === singleDeadLetterTopic(settings.deadLetter),
        deadLetterTopicOf: (topic) => deadLetterTopicOf(topic, settings.deadLetter),
        retryTopicOf: (topic, subscription) => retryTopicOf(topic, subscription, settings.retry),
        subscriptionType: settings.subscriptionType,
        logger,
      },
    );
  }

  get running(): readonly RunningSubscription[] {
    return this.runningList;
  }

  /**
   * Opens every planned subscription and the first round of each pattern; on a failure closes what opened.
   * `initialPosition`: where subscriptions it creates start (see positionAfterBrokerWait).
   */
  async open(shutdownTimeoutMs: number, initialPosition?: 'Earliest' | 'Latest'): Promise<void> {
    this.initialPosition = initialPosition;
    try {
      for (const subscription of this.planned) {
        if (subscription.pattern) await this.watch(subscription as PatternSubscription);
        else this.runningList.push(...(await this.deps.open(subscription, initialPosition)));
      }
    } catch (error) {
      await this.close(shutdownTimeoutMs);
      this.closed = false;
      throw error;
    }
  }

  /** Starts handling messages (paused subscriptions hold them), logs what is consumed, and watches the patterns. */
  startConsuming(): void {
    this.consuming = true;
    for (const running of this.runningList) this.begin(running);
    const { logger, subscriptionType } = this.deps;
    for (const subscription of this.planned) {
      const watch = this.watches.find((candidate) => candidate.origin === subscription);
      // The start-up line names the type the subscription actually has (run-time handler settings may set it).
      const type = subscription.consumer.subscriptionType ?? subscriptionType;
      logger.log(watch ? patternLine(watch) : subscriptionLine(subscription.fullTopic, subscription, type));
    }
    for (const watch of this.watches) watch.watch();
  }

  /** Sets the pause state of the subscriptions `target` names; resolves once their running messages settled. */
  async setPaused(target: SubscriptionTarget | undefined, paused: boolean, call: string): Promise<void> {
    const chosen = this.select(target, call);
    for (const subscription of chosen) subscription.paused = paused;
    const affected = this.runningList.filter(({ subscription }) => chosen.has(subscription));
    // A pause by hand and the breaker's hold are two reasons to wait: the consumers go on when neither holds.
    if (paused) {
      await Promise.all(affected.map(({ consumer }) => consumer.pause()));
      return;
    }
    for (const { consumer, subscription } of affected) if (!subscription.held) consumer.resume();
  }

  /**
   * Unblocks `key` on the consumers `target` names: its blocked message is settled as usual (dead-lettered), then
   * its key goes on. Throws when no consumer named has that key blocked, listing those that are.
   */
  async unblock(target: SubscriptionTarget | undefined, key: string, call: string): Promise<SettledEvent[]> {
    if (typeof key !== 'string' || key === '') throw new TypeError(`${call} needs the blocked key, a non-blank string`);
    const chosen = this.select(target, call);
    const affected = this.runningList.filter(({ subscription }) => chosen.has(subscription));
    const holding = affected.filter(({ consumer }) => consumer.blockedKeys.includes(key));
    if (holding.length === 0) {
      const blocked = affected.flatMap(({ consumer, readsFrom, subscription }) =>
        consumer.blockedKeys.map(
          (other) => `${JSON.stringify(other)} on ${readsFrom} (subscription ${subscription.name})`,
        ),
      );
      throw new Error(`${call}: key ${JSON.stringify(key)} is not blocked; blocked: ${blocked.join(', ') || 'none'}`);
    }
    const events = await Promise.all(holding.map(({ consumer }) => consumer.unblock(key)));
    return events.filter((event): event is SettledEvent => event !== null);
  }

  /**
   * The circuit breaker's pause of one subscription's consumers (not `subscription.paused`, which is the pause by hand):
   * a resume leaves a subscription paused by hand paused.
   */
  async hold(subscription: Subscription, held: boolean): Promise<void> {
    subscription.held = held;
    const affected = this.runningList.filter((running) => running.subscription === subscription);
    if (!held) {
      if (!subscription.paused) for (const { consumer } of affected) consumer.resume();
      return;
    }
    await Promise.all(affected.map(({ consumer }) => consumer.pause()));
  }

  describe(): SubscriptionState[] {
    return this.runningList.map(({ consumer, deferred, subscription, readsFrom, counts }) => ({
      topic: readsFrom,
      subscription: subscription.name,
      ...(readsFrom !== subscription.topic && { retryOf: subscription.topic }),
      type: subscription.consumer.subscriptionType ?? this.deps.subscriptionType,
      active: consumer.activeCount,
      overdue: consumer.overdueCount,
      ...(subscription.intake.ordering === 'key' && { waitingInLanes: consumer.laneWaitingCount }),
      ...(subscription.intake.onExhausted === 'block-key' && { blockedKeys: consumer.blockedKeys }),
      connected: consumer.isConnected(),
      paused: consumer.isPaused,
      tripped: subscription.tripped,
      refused: deferred.map((producer) => producer.state()).filter((state) => state.refused !== null),
      handled: counts.handled,
      failed: counts.failed,
    }));
  }

  /** True when another subscription of the same topic routes the URN (that one runs it). */
  handledBySibling(subscription: Subscription, urn: string): boolean {
    const all = [...this.planned.filter((other) => !other.pattern), ...this.runningList.map((r) => r.subscription)];
    return all.some(
      (other) => other !== subscription && other.fullTopic === subscription.fullTopic && other.routes.has(urn),
    );
  }

  /** Stops the patterns, then every consumer (in-flight messages settle first), then their producers. */
  async close(shutdownTimeoutMs: number): Promise<void> {
    this.closed = true;
    const watches = this.watches.splice(0);
    await Promise.all(watches.map((watch) => watch.stop()));
    const running = this.runningList.splice(0);
    await Promise.all(running.map(({ consumer }) => consumer.stop(shutdownTimeoutMs)));
    // Producers close only after every in-flight settlement had its chance to write.
    await Promise.allSettled(running.flatMap(({ owned }) => owned.map((producer) => producer.close())));
  }

  /**
   * The subscriptions `target` names: planned ones (a pattern's by its label), and the topics patterns found. A
   * pattern's subscription chosen as a whole brings its topics along (and the ones it finds later inherit it).
   */
  private select(target: SubscriptionTarget | undefined, call: string): Set<Subscription> {
    const candidates = [
      ...this.planned,
      ...this.runningList.map(({ subscription }) => subscription).filter((m) => m.origin),
    ];
    const chosen = new Set(selectSubscriptions(candidates, target, call, fullTopicName));
    for (const subscription of candidates)
      if (subscription.origin && chosen.has(subscription.origin)) chosen.add(subscription);
    return chosen;
  }

  private begin(running: RunningSubscription): void {
    if (running.subscription.paused) void running.consumer.pause();
    running.consumer.start();
  }

  private async watch(origin: PatternSubscription): Promise<void> {
    const { deps } = this;
    const list = deps.listerFor(origin);
    const watch = new PatternWatch(origin, {
      list,
      excluded: deps.excluded,
      taken: (topic, name) =>
        this.planned.some((other) => !other.pattern && other.name === name && other.fullTopic === topic) ||
        this.runningList.some(({ subscription }) => subscription.name === name && subscription.fullTopic === topic),
      consume: async (topic, late, reportedAs) => {
        // Released with the others on close: close() waits for a discovery under way before releasing.
        const topics = {
          deadLetterTopic: deps.deadLetterTopicOf(topic),
          retryTopic: deps.retryTopicOf(topic, origin.name),
        };
        const subscription = origin.derive(topic, topics, reportedAs);
        // A topic found after start is read from its first message: nothing published before it was found is skipped.
        const opened = await deps.open(subscription, late ? 'Earliest' : this.initialPosition);
        this.runningList.push(...opened);
        if (this.consuming && !this.closed) for (const running of opened) this.begin(running);
      },
      logger: deps.logger,
    });
    await watch.start();
    this.watches.push(watch);
  }
}

/** The start-up line of a pattern subscription: what it matched and how often it looks again. */
function patternLine(watch: PatternWatch): string {
  const { topics, origin } = watch;
  return (
    `consuming ${topics.length} topic(s) matching ${watch.pattern.label} through subscription ` +
    `${origin.name}${topics.length > 0 ? ` (${topics.join(', ')})` : ''}; new matching topics are looked ` +
    `for every ${watch.discoveryMs} ms`
  );
}

/**
 * The start-up line of one subscription (pure): what it consumes and which handler runs each URN, so a handler
 * that is not wired shows at a glance. E.g.
 * `consuming persistent://public/default/orders (subscription babelqueue, Shared): urn:babel:orders:created -> OrdersController.created`
 */
export function subscriptionLine(
  topic: string,
  subscription: { name: string; routes: ReadonlyMap<string, { name: string }>; retryTopic?: string | null },
  type: SubscriptionType,
): string {
  const routes = [...subscription.routes].map(([urn, route]) => `${urn} -> ${route.name}`);
  const retries = subscription.retryTopic ? ` and its retry topic ${fullTopicName(subscription.retryTopic)}` : '';
  return (
    `consuming ${topic}${retries} (subscription ${subscription.name}, ${type}): ` +
    (routes.length > 0 ? routes.join(', ') : 'no handlers (every message is an unknown URN)')
  );
}
