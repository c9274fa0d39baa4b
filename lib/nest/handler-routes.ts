import type { MessageHandler } from '@nestjs/microservices';
import type { HandlerPolicy } from '../consumer/index.js';
import type { HandlerRef } from './babel.context.js';
import type { DirectCall } from './direct-call.js';
import type { BabelFailureRelay } from './failure-relay.js';
import { normalizeTopic } from '../pulsar/websocket/topic.js';
import type { PayloadSchema } from '../schema/payload-schema.js';
import type { RetriableRule } from './retriable-rule.js';

/** One handler as the server runs it. */
export interface Route {
  handler: MessageHandler;
  /** `Class.method`, for errors and logs. */
  name: string;
  /** Where the handler is declared (absent for a pattern registered without @BabelHandler). */
  declaredAt?: HandlerRef;
  /** Set at start when the method can be called without Nest's pipeline (see planDirectCall). */
  direct?: { call: DirectCall; relay: BabelFailureRelay };
  timeoutMs?: number;
  policy?: HandlerPolicy;
  /** JSON Schema of `data`, validated (and its marked fields decrypted) before the handler runs. */
  schema?: PayloadSchema;
  /** The handler has an idempotency store of its own: the module-wide one does not wrap it. */
  ownIdempotency?: boolean;
  /** The handler's own retriable rule, asked before the server's (see composeRetriable). */
  isRetriable?: RetriableRule;
}

/** A topic and subscription the server consumes, with the handlers routed within it. */
export interface Binding {
  /** The topic as configured (short or full name). */
  topic: string;
  subscription: string;
  routes: Map<string, Route>;
}

const fullName = (topic: string): string => {
  try {
    return normalizeTopic(topic);
  } catch {
    return topic;
  }
};

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
  add(urn: string, route: Route, place: { topic?: string; subscription?: string } = {}): void {
    const subscription = place.subscription ?? this.defaultSubscription;
    const topics = place.topic !== undefined ? [place.topic] : this.defaultTopics;
    if (place.topic !== undefined || place.subscription !== undefined) this.explicit = true;
    const targets = topics.map((topic) => this.binding(topic, subscription));
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

  /** True when another subscription of the same topic handles the URN (that subscription runs it, this one skips it). */
  handledBySibling(binding: Binding, urn: string, among: readonly Binding[]): boolean {
    const topic = fullName(binding.topic);
    return among.some((other) => other !== binding && other.routes.has(urn) && fullName(other.topic) === topic);
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
