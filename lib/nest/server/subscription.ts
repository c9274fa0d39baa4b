import type { PulsarConsumerConfig } from '../../pulsar/client-types.js';
import type { OnExhausted, Ordering } from '../options/ordering-option.js';
import type { TopicPattern } from '../../pulsar/topic-pattern.js';
import { delayedRetryRefusal } from '../../consumer/settle-request.js';
import type { Route } from './handler-routes.js';
import type { UnknownUrnPolicy } from '../../consumer/unknown-urn.js';
import type { ResolvedHandler, SubscriptionPolicy } from '../../consumer/processor-context.js';
import { RatePacer } from '../../consumer/rate-pacer.js';
import type { CircuitBreakerOptions } from '../../consumer/circuit-breaker.js';

/** A subscription made for every topic of a namespace that matches a pattern (docs/pulsar-features.md#topic-patterns). */
export interface SubscriptionPattern {
  pattern: TopicPattern;
  discoveryMs: number;
}

/** How the consumer of a subscription takes in messages, resolved from every option that bears on it. */
export interface SubscriptionIntake {
  /** Messages handled at once (at least a full batch when the subscription has batch handlers). */
  concurrency: number;
  /** Handlers past their time-out that may still run before no new message is taken; unset = the consumer's default. */
  maxOverdue: number | undefined;
  /** While paused, how many messages the client may hand over before it is made to wait (its receiver queue). */
  pausedHoldLimit: number | undefined;
  /** Why a delayed retry cannot be honoured here, or null. */
  delayRefusal: string | null;
  /** `'key'`: per-key order, retries in place (docs/scale.md#per-key-order). */
  ordering: Ordering;
  /** With `'key'` ordering: `'block-key'` keeps a message failed for good and blocks its key until unblocked. */
  onExhausted: OnExhausted;
}

/** A handler's settings as its subscription runs them: its own merged over the server's, once at start. */
export type ResolvedHandlerSettings = Omit<ResolvedHandler, 'run'>;

export interface SubscriptionParts {
  /** The topic as configured (short or full name); for a pattern subscription, the pattern's label. */
  topic: string;
  /** The full topic name (`persistent://tenant/namespace/topic`), or the pattern's label. */
  fullTopic: string;
  /** What `ctx.getTopic()` says: as configured, or for a topic a pattern found, in the pattern's form. */
  reportedTopic: string;
  /** The Pulsar subscription's name. */
  name: string;
  routes: ReadonlyMap<string, Route>;
  /** The Pulsar consumer: the library's settings with the pass-through `consumerOptions` merged over them. */
  consumer: PulsarConsumerConfig;
  intake: SubscriptionIntake;
  /** Each routed URN's handler settings. */
  handlers: ReadonlyMap<string, ResolvedHandlerSettings>;
  /** The settlement settings of a message no handler here runs (a poison message, an unknown URN). */
  policy: SubscriptionPolicy;
  /** Where this subscription's dead letters go (null: a producer of the user's, or none). */
  deadLetterTopic: string | null;
  /**
   * The subscription's own retry topic (`retry: 'retry-topic'`), consumed by it beside `topic`; null: retry
   * copies go back to `topic` (or there are none).
   */
  retryTopic: string | null;
  /** What it does with a URN none of its handlers takes (docs/retries.md#unknown-urns). */
  unknownUrn: UnknownUrnPolicy;
  /** Handler calls started per second at most on this instance (docs/retries.md#rate-limit); null = no limit. */
  maxPerSecond: number | null;
  /** Its circuit breaker's settings (docs/retries.md#circuit-breaker); undefined = no breaker. */
  circuitBreaker: CircuitBreakerOptions | undefined;
  pattern?: SubscriptionPattern;
}

/**
 * One topic + subscription as the server runs it: resolved once at start from the server's settings and its
 * handlers, and for each topic a pattern finds, derived from the pattern's subscription with everything inherited.
 * Every part of the server reads a subscription from here (docs/architecture.md#the-subscription-model).
 */
export class Subscription implements SubscriptionParts {
  readonly topic: string;
  readonly fullTopic: string;
  readonly reportedTopic: string;
  readonly name: string;
  readonly routes: ReadonlyMap<string, Route>;
  readonly consumer: PulsarConsumerConfig;
  readonly intake: SubscriptionIntake;
  readonly handlers: ReadonlyMap<string, ResolvedHandlerSettings>;
  readonly policy: SubscriptionPolicy;
  readonly deadLetterTopic: string | null;
  readonly retryTopic: string | null;
  readonly unknownUrn: UnknownUrnPolicy;
  readonly maxPerSecond: number | null;
  readonly circuitBreaker: CircuitBreakerOptions | undefined;
  /**
   * Waits for the next start time under `maxPerSecond` (null without one): one pacer per subscription, shared by
   * its consumers (the topic's and its retry topic's); a topic a pattern finds gets its own.
   */
  readonly pace: (() => Promise<void>) | null;
  readonly pattern?: SubscriptionPattern;
  /** The pattern subscription this one was derived from (a topic the pattern found). */
  readonly origin?: Subscription;
  /** Set by pause() / resume(); a subscription that opens while paused starts paused. */
  paused = false;
  /** Its circuit breaker is open or probing (docs/retries.md#circuit-breaker). */
  tripped = false;
  /** Its circuit breaker holds its consumers (open, not probing): a resume() by hand leaves them held. */
  held = false;

  constructor(parts: SubscriptionParts, origin?: Subscription) {
    this.topic = parts.topic;
    this.fullTopic = parts.fullTopic;
    this.reportedTopic = parts.reportedTopic;
    this.name = parts.name;
    this.routes = parts.routes;
    this.consumer = parts.consumer;
    this.intake = parts.intake;
    this.handlers = parts.handlers;
    this.policy = parts.policy;
    this.deadLetterTopic = parts.deadLetterTopic;
    this.retryTopic = parts.retryTopic;
    this.unknownUrn = parts.unknownUrn;
    this.maxPerSecond = parts.maxPerSecond;
    this.circuitBreaker = parts.circuitBreaker;
    const pacer = parts.maxPerSecond === null ? null : new RatePacer(parts.maxPerSecond);
    this.pace = pacer && (() => pacer.wait());
    if (parts.pattern) this.pattern = parts.pattern;
    if (origin) {
      this.origin = origin;
      this.paused = origin.paused;
    }
  }

  /**
   * The subscription of one topic this pattern subscription found: the same handlers, settings and pause state.
   * Where a new subscription starts is the subscription set's decision (see SubscriptionSet), not the subscription's own.
   */
  derive(
    fullTopic: string,
    topics: Pick<SubscriptionParts, 'deadLetterTopic' | 'retryTopic'>,
    reportedTopic: string,
  ): Subscription {
    if (!this.pattern) throw new Error(`${this.topic} is not a pattern subscription`);
    const { pattern: _pattern, ...inherited } = this as SubscriptionParts;
    return new Subscription(
      {
        ...inherited,
        topic: fullTopic,
        fullTopic,
        reportedTopic,
        ...topics,
        consumer: { ...this.consumer, topic: fullTopic },
      },
      this,
    );
  }

  /** `topic (subscription s)`, as the logs and errors name it. */
  get label(): string {
    return `${this.topic} (subscription ${this.name})`;
  }
}

/** Whether Pulsar honours delivery times on a subscription of this type with this retry mode (one rule, here). */
export function delayRefusalOf(retryByNack: boolean, consumer: Pick<PulsarConsumerConfig, 'subscriptionType'>) {
  return delayedRetryRefusal(retryByNack, consumer.subscriptionType ?? 'Shared');
}
