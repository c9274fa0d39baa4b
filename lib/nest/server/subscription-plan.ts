import { isRetriableNestFailure } from '../pipeline/failure-classify.js';
import { composeRetriable } from '../options/retriable-rule.js';
import { clientNameOf } from '../client/producer-settings.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { checkClientOptions, type PulsarClientName, type PulsarConsumerOptions } from '../../pulsar/client-options.js';
import { consumerConfigFor, deadLetterTopicOf, retryTopicOf } from './consumer-config.js';
import { checkReleasable } from '../options/consumer-options.js';
import type { Binding, Route } from './handler-routes.js';
import type { ResolvedServerOptions } from './server-options.js';
import { delayRefusalOf, Subscription, type ResolvedHandlerSettings } from './subscription.js';
import type { SubscriptionPolicy } from '../../consumer/processor-context.js';
import type { OnExhausted, Ordering } from '../options/ordering-option.js';

/** A topic with batch handlers takes in at least a full batch at once, or no batch would ever fill. */
function intakeConcurrency(concurrency: number, routes: ReadonlyMap<string, Route>): number {
  return Math.max(concurrency, ...[...routes.values()].map((route) => route.batch?.maxMessages ?? 0));
}

/** Two handlers of one subscription (one consumer) that ask for different values of one of its settings. */
function disagreement(binding: Binding, first: string, second: string, what: string): TypeError {
  return new TypeError(
    `${first} and ${second} share the consumer of topic ${binding.topic} (subscription ${binding.subscription}) ` +
      `but ${what}: give one of them its own subscription`,
  );
}

/** A setting's value in an error: a breaker's options as JSON, a word or number as it is. */
const shown = (value: unknown) => (typeof value === 'object' ? JSON.stringify(value) : String(value));

/** The settings of a subscription its handlers may give (it is one consumer, so they must agree). */
type SubscriptionSetting =
  'subscriptionType' | 'concurrency' | 'unknownUrn' | 'ordering' | 'onExhausted' | 'circuitBreaker' | 'maxPerSecond';

/**
 * A setting of the subscription that its handlers may give (its type, its concurrency, its breaker): the value its
 * handlers agree on, else the server's. A subscription is one consumer, so two handlers that disagree are refused.
 */
function agreed<K extends SubscriptionSetting, D extends Route[K]>(
  binding: Binding,
  key: K,
  serverValue: D,
): NonNullable<Route[K]> | D {
  let chosen: { value: NonNullable<Route[K]>; by: string } | undefined;
  for (const route of binding.routes.values()) {
    const value = route[key];
    if (value === undefined) continue;
    if (chosen && JSON.stringify(chosen.value) !== JSON.stringify(value))
      throw disagreement(
        binding,
        chosen.by,
        route.name,
        `their handler settings give different ${key} (${shown(chosen.value)}, ${shown(value)})`,
      );
    chosen = { value: value as NonNullable<Route[K]>, by: route.name };
  }
  return chosen?.value ?? serverValue;
}

/** A batch runs many messages at once, several of one key among them: it cannot keep a key's order. */
function refuseBatchesInKeyOrder(binding: Binding): void {
  for (const route of binding.routes.values())
    if (route.batch)
      throw new TypeError(
        `${route.name} is a batch handler on topic ${binding.topic} (subscription ${binding.subscription}), whose ` +
          "ordering is 'key': a batch cannot keep a key's order; give it its own subscription or ordering 'none'",
      );
}

/**
 * What a message failed for good does to its key: blocking needs lanes, so a handler that asks for it on a
 * subscription without per-key order is refused; the server's own value only applies where there are lanes.
 */
function exhaustedKeyPolicy(binding: Binding, ordering: Ordering, serverValue: OnExhausted): OnExhausted {
  const onExhausted = agreed(binding, 'onExhausted', serverValue);
  if (ordering === 'key') return onExhausted;
  const asking = [...binding.routes.values()].find((route) => route.onExhausted === 'block-key');
  if (asking)
    throw new TypeError(
      `${asking.name} asks for onExhausted 'block-key' on topic ${binding.topic} (subscription ` +
        `${binding.subscription}), whose ordering is 'none': a key can only wait in a lane; set ordering 'key'`,
    );
  return 'dead-letter';
}

/**
 * The receiver queue of a consumer when nobody set one: what the client prefetches beyond the messages being
 * handled. The clients' own default (1000) lets an instance whose handlers are slow or stuck hold hundreds of
 * messages that the other consumers of a Shared subscription then never get; a small queue keeps the work
 * spreading, and still lets the client fetch ahead (docs/pulsar-features.md#slow-consumers-on-a-shared-subscription).
 */
export function defaultReceiverQueue(concurrency: number): number {
  return Math.max(10, 2 * concurrency);
}

/** A batch member's time-out also covers the wait for its batch to fill. */
function routeTimeoutMs(route: Route, serverTimeoutMs: number): number {
  const timeoutMs = route.timeoutMs ?? serverTimeoutMs;
  return route.batch && timeoutMs > 0 ? timeoutMs + route.batch.maxWaitMs : timeoutMs;
}

/**
 * The subscriptions of a server (pure but for the rules' warnings): one per binding, each with everything its
 * consumer and handlers need resolved from the server's settings, the handlers' own options and the pass-through
 * consumer options. A setting the client cannot honour, or two handlers of one subscription that disagree, throws.
 */
export function planSubscriptions(
  bindings: readonly Binding[],
  settings: ResolvedServerOptions,
  /** Reports a user's retriable rule that threw or answered something else, naming whose it is. */
  warn: (problem: string) => void,
): Subscription[] {
  const client = clientNameOf(settings.client);
  const serverRule = composeRetriable([settings.isRetriable], isRetriableNestFailure, (problem) =>
    warn(`the server: ${problem}`),
  );
  const policy: SubscriptionPolicy = {
    maxAttempts: settings.maxAttempts,
    ...(settings.retryPolicy && { retryPolicy: settings.retryPolicy }),
    isRetriable: serverRule,
  };
  return bindings.map((binding) => {
    const passThrough = bindingConsumerOptions(binding, settings.consumerOptions, client);
    const subscriptionType = agreed(binding, 'subscriptionType', settings.subscriptionType);
    const concurrency = intakeConcurrency(agreed(binding, 'concurrency', settings.concurrency), binding.routes);
    const unknownUrn = agreed(binding, 'unknownUrn', settings.unknownUrn);
    const circuitBreaker = agreed(binding, 'circuitBreaker', settings.circuitBreaker);
    const maxPerSecond = agreed(binding, 'maxPerSecond', settings.maxPerSecond);
    const ordering = agreed(binding, 'ordering', settings.ordering);
    if (ordering === 'key') refuseBatchesInKeyOrder(binding);
    const onExhausted = exhaustedKeyPolicy(binding, ordering, settings.onExhausted);
    const configured = consumerConfigFor(binding, { ...settings, subscriptionType }, passThrough);
    const consumer =
      configured.receiverQueueSize === undefined
        ? { ...configured, receiverQueueSize: defaultReceiverQueue(concurrency) }
        : configured;
    if (unknownUrn === 'release')
      checkReleasable(
        consumer.subscriptionType ?? 'Shared',
        `${binding.topic} (subscription ${binding.subscription}) unknownUrn 'release'`,
        (problem) => {
          throw new TypeError(problem);
        },
      );
    const handlers = new Map<string, ResolvedHandlerSettings>();
    for (const [urn, route] of binding.routes) {
      const retryPolicy = route.retryPolicy ?? settings.retryPolicy;
      handlers.set(urn, {
        isRetriable: composeRetriable([route.isRetriable, settings.isRetriable], isRetriableNestFailure, (problem) =>
          warn(`${route.name}: ${problem}`),
        ),
        timeoutMs: routeTimeoutMs(route, settings.handlerTimeoutMs),
        maxAttempts: route.maxAttempts ?? settings.maxAttempts,
        ...(retryPolicy && { retryPolicy }),
      });
    }
    // Whichever way the receiver queue was set, it is what the client holds while paused.
    const receiverQueue = consumer.receiverQueueSize;
    return new Subscription({
      topic: binding.topic,
      fullTopic: fullTopicName(binding.topic),
      reportedTopic: binding.topic,
      name: binding.subscription,
      routes: binding.routes,
      consumer,
      intake: {
        concurrency,
        maxOverdue: settings.maxOverdueHandlers,
        pausedHoldLimit: receiverQueue === undefined ? undefined : Math.max(1, receiverQueue),
        // Retries in place wait in this process: their delays hold on every subscription type.
        delayRefusal: ordering === 'key' ? null : delayRefusalOf(settings.retry === 'nack', consumer),
        ordering,
        onExhausted,
      },
      handlers,
      policy,
      deadLetterTopic: binding.pattern ? null : deadLetterTopicOf(binding.topic, settings.deadLetter),
      // A pattern's label is no topic: each topic it finds gets its own when derived (see SubscriptionSet).
      retryTopic: binding.pattern ? null : retryTopicOf(binding.topic, binding.subscription, settings.retry),
      unknownUrn: { strategy: unknownUrn, maxReleases: settings.unknownUrnMaxReleases },
      maxPerSecond: maxPerSecond ?? null,
      circuitBreaker,
      ...(binding.pattern && { pattern: binding.pattern }),
    });
  });
}

/**
 * The Pulsar consumer settings of one subscription (docs/pulsar-features.md#client-options): the server's, with
 * those of the handlers routed in it merged over them. A subscription is one consumer, so two of its handlers that
 * ask for different values of one setting are refused at start-up, naming both.
 */
export function bindingConsumerOptions(
  binding: Binding,
  serverOptions: PulsarConsumerOptions | undefined,
  client: PulsarClientName | undefined,
): PulsarConsumerOptions {
  const merged: Record<string, unknown> = { ...serverOptions };
  const setBy = new Map<string, string>();
  for (const route of binding.routes.values()) {
    for (const [key, value] of Object.entries(route.consumerOptions ?? {})) {
      const earlier = setBy.get(key);
      if (earlier !== undefined && JSON.stringify(merged[key]) !== JSON.stringify(value)) {
        throw disagreement(binding, earlier, route.name, `ask for different consumerOptions.${key}`);
      }
      merged[key] = value;
      setBy.set(key, route.name);
    }
  }
  const where = `consumerOptions of topic ${binding.topic} (subscription ${binding.subscription})`;
  return checkClientOptions('consumer', merged, where, client);
}
