import { describeValue } from '../../describe-value.js';

/** Which consumers `server.pause()` / `resume()` act on: none given = all; a topic alone = all its subscriptions. */
export interface SubscriptionTarget {
  /** Short (`orders`) or full (`persistent://public/default/orders`) name. */
  topic?: string;
  subscription?: string;
}

/** A consumer as pause and resume name it. */
export interface ConsumedSubscription {
  /** The topic as configured. */
  topic: string;
  /** The Pulsar subscription's name. */
  name: string;
}

function optionalName(value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new TypeError(`${what} must be a non-blank string, got ${describeValue(value)}`);
  return value.trim();
}

/**
 * The consumers of `consumed` that `target` names (pure; `fullTopic` turns a short name into a full one). A target
 * that names none is an error listing what is consumed: a typo must not pause nothing in silence.
 */
export function selectSubscriptions<T extends ConsumedSubscription>(
  consumed: readonly T[],
  target: unknown,
  call: string,
  fullTopic: (topic: string) => string,
): T[] {
  if (target === undefined) return [...consumed];
  if (typeof target !== 'object' || target === null || Array.isArray(target))
    throw new TypeError(`${call} takes { topic?, subscription? } or nothing (all), got ${describeValue(target)}`);
  const { topic, subscription, ...rest } = target as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw new TypeError(`${call}: unknown key(s) ${unknown.join(', ')}; allowed: topic, subscription`);
  const wantedTopic = optionalName(topic, `${call} topic`);
  const wantedSubscription = optionalName(subscription, `${call} subscription`);
  const selected = consumed.filter(
    (candidate) =>
      (wantedTopic === undefined || fullTopic(candidate.topic) === fullTopic(wantedTopic)) &&
      (wantedSubscription === undefined || candidate.name === wantedSubscription),
  );
  if (selected.length === 0) {
    const named = [
      ...(wantedTopic === undefined ? [] : [`topic ${JSON.stringify(wantedTopic)}`]),
      ...(wantedSubscription === undefined ? [] : [`subscription ${JSON.stringify(wantedSubscription)}`]),
    ].join(' and ');
    const list = consumed.map((entry) => `${entry.topic} (subscription ${entry.name})`).join(', ');
    throw new Error(`${call}: this server consumes no ${named}; it consumes ${list || 'nothing'}`);
  }
  return selected;
}
