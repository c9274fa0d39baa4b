import type { UnknownUrnStrategy } from '../../consumer/unknown-urn.js';
import type { CircuitBreakerOptions } from '../../consumer/circuit-breaker.js';
import type { OnExhausted, Ordering } from '../options/ordering-option.js';
import type { MessageHandler } from '@nestjs/microservices';
import type { RetryPolicy } from '../../consumer/retry-delay.js';
import type { BabelContext, HandlerRef } from '../context/babel.context.js';
import type { DirectCall } from '../pipeline/direct-call.js';
import type { BabelFailureRelay } from '../pipeline/failure-relay.js';
import { fullTopicName as fullName } from '../../pulsar/topic-name.js';
import type { PayloadSchema } from '../../schema/payload-schema.js';
import type { PulsarConsumerOptions } from '../../pulsar/client-options.js';
import type { BatchCollector, ResolvedBatchOptions } from '../../consumer/batch-collector.js';
import type { TopicPattern } from '../../pulsar/topic-pattern.js';
import type { RetriableRule } from '../options/retriable-rule.js';
import type { SubscriptionType } from '../../pulsar/client-types.js';

/** One message waiting for its batch: its payload (validated, decrypted) and its own context. */
export interface BatchMember {
  payload: unknown;
  context: BabelContext;
}

/** One handler as the server runs it. */
export interface Route {
  handler: MessageHandler;
  /** `Class.method`, for errors and logs. */
  name: string;
  /** Where the handler is declared (absent for a pattern registered without @BabelHandler). */
  declaredAt?: HandlerRef;
  /** Set at start when the method can be called without Nest's pipeline (see planDirectCall). */
  direct?: { call: DirectCall; relay: BabelFailureRelay };
  /** The handler's own settings, when it has them (the server's otherwise). */
  timeoutMs?: number;
  maxAttempts?: number;
  retryPolicy?: RetryPolicy;
  /** JSON Schema of `data`, validated (and its marked fields decrypted) before the handler runs. */
  schema?: PayloadSchema;
  /** The handler has an idempotency store of its own: the module-wide one does not wrap it. */
  ownIdempotency?: boolean;
  /** Pulsar consumer settings of the subscription this handler consumes through (@BabelHandler consumerOptions). */
  consumerOptions?: PulsarConsumerOptions;
  /** A batch handler: its messages are gathered and handed over together (see BatchDispatch). */
  batch?: ResolvedBatchOptions;
  /** Set on a batch handler's first message: the batch being gathered, shared by every topic it consumes. */
  batchCollector?: BatchCollector<BatchMember>;
  /** The handler's own retriable rule, asked before the server's (see composeRetriable). */
  isRetriable?: RetriableRule;
  /** The type of the handler's subscription, when run-time settings give one (the server's otherwise). */
  subscriptionType?: SubscriptionType;
  /** Messages handled at once on the handler's subscription, when run-time settings give it. */
  concurrency?: number;
  /** What the handler's subscription does with a URN nobody there handles, when run-time settings give it. */
  unknownUrn?: UnknownUrnStrategy;
  /** Runs in the server's inbox (true) or not (false); absent: as the inbox's `every` says. */
  inbox?: boolean;
  /** The circuit breaker of the handler's subscription, when the handler gives one (the server's otherwise). */
  circuitBreaker?: CircuitBreakerOptions;
  /** The rate limit of the handler's subscription per instance, when the handler gives one. */
  maxPerSecond?: number;
  /** Per-key order on the handler's subscription, when the handler or run-time settings give it. */
  ordering?: Ordering;
  /** What a message failed for good does to its key, when the handler or run-time settings give it. */
  onExhausted?: OnExhausted;
}

/** A topic and subscription the server consumes, with the handlers routed within it. */
export interface Binding {
  /** The topic as configured (short or full name). */
  topic: string;
  subscription: string;
  routes: Map<string, Route>;
  /** A pattern binding: `topic` is the pattern's label, and the server consumes each topic that matches. */
  pattern?: { pattern: TopicPattern; discoveryMs: number };
}

/** Where a handler consumes: its own topic or pattern and subscription (default: the server's). */
export interface BindingPlace {
  topic?: string;
  subscription?: string;
  pattern?: NonNullable<Binding['pattern']>;
}

/**
 * Which topic and subscription each handler consumes. A handler without its own `topic` or `subscription` is
 * routed on every one of the server's topics through the server's subscription; `orders` and
 * `persistent://public/default/orders` are one topic.
 */
export class HandlerRoutes {
  private readonly bindings = new Map<string, Binding>();
  /** Whether any handler named its own topic or subscription. */
  private explicit = false;

  constructor(
    private readonly defaultTopics: readonly string[],
    private readonly defaultSubscription: string,
  ) {
    for (const topic of defaultTopics) this.binding(topic, defaultSubscription);
  }

  /** Adds a handler; throws, naming both, when another handler already has the URN on one of its bindings. */
  add(urn: string, route: Route, place: BindingPlace = {}): void {
    const subscription = place.subscription ?? this.defaultSubscription;
    const topics = place.topic !== undefined ? [place.topic] : this.defaultTopics;
    if (place.topic !== undefined || place.subscription !== undefined || place.pattern) this.explicit = true;
    const targets = place.pattern
      ? [this.patternBinding(place.pattern, subscription)]
      : topics.map((topic) => this.binding(topic, subscription));
    for (const target of targets) {
      const existing = target.routes.get(urn);
      if (existing) {
        throw new Error(
          `two handlers for ${urn} on one BabelPulsarServer (topic ${target.topic}, subscription ` +
            `${target.subscription}): ${existing.name} and ${route.name}`,
        );
      }
    }
    for (const target of targets) target.routes.set(urn, route);
  }

  /**
   * What the server subscribes: every binding that has a handler. The server's own topics are also consumed
   * without handlers (unknown URNs are then dead-lettered) unless handlers chose their topics themselves, so a
   * default topic nobody handles is not subscribed behind the user's back.
   */
  subscribed(): Binding[] {
    // Without explicit handlers, the only bindings are the server's own topics.
    return [...this.bindings.values()].filter((binding) => binding.routes.size > 0 || !this.explicit);
  }

  /** Every handler as `Controller.method (urn)`, for an error that lists them. */
  handlerNames(): string[] {
    const names = new Set<string>();
    for (const binding of this.bindings.values())
      for (const [urn, route] of binding.routes) names.add(`${route.name} (${urn})`);
    return [...names];
  }

  /** True when another subscription of the same topic handles the URN (that subscription runs it, this one skips it). */
  handledBySibling(binding: Binding, urn: string, among: readonly Binding[]): boolean {
    const topic = fullName(binding.topic);
    return among.some((other) => other !== binding && other.routes.has(urn) && fullName(other.topic) === topic);
  }

  private patternBinding(pattern: NonNullable<Binding['pattern']>, subscription: string): Binding {
    const key = `pattern ${pattern.pattern.label}\u0000${subscription}`;
    let binding = this.bindings.get(key);
    if (!binding) {
      binding = { topic: pattern.pattern.label, subscription, routes: new Map(), pattern };
      this.bindings.set(key, binding);
    } else if (binding.pattern && binding.pattern.discoveryMs !== pattern.discoveryMs) {
      // Handlers of one pattern share its consumers: the most frequent discovery serves them all.
      binding.pattern = { ...binding.pattern, discoveryMs: Math.min(binding.pattern.discoveryMs, pattern.discoveryMs) };
    }
    return binding;
  }

  private binding(topic: string, subscription: string): Binding {
    const key = `${fullName(topic)}\u0000${subscription}`;
    let binding = this.bindings.get(key);
    if (!binding) {
      binding = { topic, subscription, routes: new Map() };
      this.bindings.set(key, binding);
    }
    return binding;
  }
}
