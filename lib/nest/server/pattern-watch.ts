import type { ConsumerLogger } from '../../consumer/index.js';
import { inPatternForm, matchingTopics, type TopicPattern } from '../../pulsar/topic-pattern.js';
import type { Subscription, SubscriptionPattern } from './subscription.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { topicListerOf, type TopicLister } from '../../pulsar/topic-lister.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { isProducer, type ResolvedServerOptions } from './server-options.js';

export interface PatternWatchHooks {
  list: TopicLister;
  /** The server's own dead-letter topic (when one topic takes every record): never consumed by a pattern. */
  excluded(topic: string): boolean;
  /** True when another binding already consumes `topic` through `subscription` (its consumer stays the only one). */
  taken(topic: string, subscription: string): boolean;
  /**
   * Subscribes one matching topic (its full name) with the pattern's handlers. `late`: the topic appeared after
   * start, so its subscription starts at its first message (what was published before discovery is consumed).
   */
  consume(topic: string, late: boolean, reportedAs: string): Promise<void>;
  logger: ConsumerLogger;
}

/**
 * One pattern binding's topics: lists the namespace at start and every `discoveryMs`, and hands each new matching
 * topic to the server, which consumes it as a topic of its own (so retry copies and dead letters of a message go to
 * that message's topic and its `.dlq`, as for any topic).
 */
export class PatternWatch {
  private readonly consumed = new Set<string>();
  private readonly reportedTaken = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private failing = false;
  private round: Promise<void> = Promise.resolve();

  constructor(
    /** The pattern's subscription, which every topic it finds inherits. */
    readonly origin: Subscription & { pattern: SubscriptionPattern },
    private readonly hooks: PatternWatchHooks,
  ) {}

  get pattern(): TopicPattern {
    return this.origin.pattern.pattern;
  }

  get discoveryMs(): number {
    return this.origin.pattern.discoveryMs;
  }

  /** The topics consumed so far. */
  get topics(): string[] {
    return [...this.consumed].sort();
  }

  /** The first listing and subscriptions; rejects (nothing consumed) when the namespace cannot be listed. */
  async start(): Promise<void> {
    await this.discover(false);
  }

  /** Looks for new topics every `discoveryMs` from now on. */
  watch(): void {
    if (this.stopped || this.timer) return;
    const next = () => {
      this.timer = setTimeout(() => {
        this.round = this.discover(true).then(
          () => this.recovered(),
          (error: unknown) => this.failed(error),
        );
        void this.round.then(() => !this.stopped && next());
      }, this.discoveryMs);
      this.timer.unref();
    };
    next();
  }

  /** Stops looking (a listing under way finishes first, so nothing is subscribed after this resolves). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.round;
  }

  private async discover(late: boolean): Promise<void> {
    const listed = await this.hooks.list(this.pattern);
    const { name: subscription } = this.origin;
    for (const topic of matchingTopics(this.pattern, listed, this.hooks.excluded)) {
      if (this.stopped) return;
      if (this.consumed.has(topic)) continue;
      if (this.hooks.taken(topic, subscription)) {
        if (!this.reportedTaken.has(topic)) {
          this.reportedTaken.add(topic);
          this.hooks.logger.warn(
            `${topic} matches topicsPattern ${this.pattern.label} but is already consumed through subscription ` +
              `${subscription} by other handlers: the pattern's handlers do not run there (give the pattern ` +
              'handler a subscription of its own)',
          );
        }
        continue;
      }
      await this.hooks.consume(topic, late, inPatternForm(this.pattern, topic));
      this.consumed.add(topic);
      if (late) this.hooks.logger.log(`${topic} matches topicsPattern ${this.pattern.label}: consuming it`);
    }
  }

  private recovered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.hooks.logger.log(`topicsPattern ${this.pattern.label}: listing the namespace works again`);
  }

  /** A failed round is retried at the next period; logged once until a round succeeds. */
  private failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.hooks.logger.warn(
      `topicsPattern ${this.pattern.label}: looking for new topics failed (${reason}); the topics found so far ` +
        `are still consumed, and the next look is in ${this.discoveryMs} ms`,
    );
  }
}

/**
 * How a pattern subscription lists its namespace: through the broker's admin API (neither client can list
 * topics), known only for a client the library created; otherwise an error naming the handlers.
 */
export function patternListerFor(client: PulsarClientLike, subscription: Subscription): TopicLister {
  const list = topicListerOf(client);
  if (list) return list;
  const { pattern } = subscription.pattern!;
  const names = [...subscription.routes.values()].map(({ name }) => name).join(', ');
  throw new TypeError(
    `${names}: topicsPattern ${pattern.label} needs the broker's admin API to list the topics of ` +
      `${pattern.tenant}/${pattern.namespace}, and this client was not created by the library: give ` +
      'BabelQueueModule a serviceUrl, or create the client with createPulsarClient or new PulsarWebSocketClient',
  );
}

/** The one dead-letter topic of every record, when one is configured: no pattern consumes it. */
export function singleDeadLetterTopic(deadLetter: ResolvedServerOptions['deadLetter']): string | undefined {
  if (deadLetter === true || deadLetter === false || deadLetter === undefined) return undefined;
  return fullTopicName(isProducer(deadLetter) ? deadLetter.getTopic() : deadLetter.trim());
}
