// The dashboard's subscriptions view, the pure part: the server's consumers as rows, with rates derived from their
// settlement counters between two readings and backlog and lag from the admin API's topic stats.
import { lagOf, type TopicStats } from '../otel/subscription-lag.js';
import type { SubscriptionState } from '../nest/server/subscription-set.js';
import type { SubscriptionType } from '../pulsar/client-types.js';

/** What a subscription is doing, the most pressing first: a row shows one. */
export type SubscriptionRunState = 'disconnected' | 'tripped' | 'paused' | 'stalled' | 'running';

/** One consumer of the app as the page shows it. */
export interface DashboardSubscription {
  /** The topic the consumer reads (a subscription's retry topic has a row of its own). */
  topic: string;
  subscription: string;
  type: SubscriptionType;
  /** The topic and subscription pause and resume name (a retry topic's row: the topic it retries). */
  target: { topic: string; subscription: string };
  state: SubscriptionRunState;
  /** Handlers running now. */
  active: number;
  /** Acknowledged per second since the previous reading; null until there are two. */
  handledPerSecond: number | null;
  /** Failed (retried, dead-lettered, …) per second since the previous reading; null until there are two. */
  failedPerSecond: number | null;
  handled: number;
  failed: number;
  /** Messages waiting for the subscription on this topic; null when the admin API could not be read. */
  backlog: number | null;
  /** Age of the oldest unacknowledged message, ms (0: nothing waits); null when the admin API could not be read. */
  lagMs: number | null;
  /**
   * Keys blocked by a message that failed for good (`onExhausted: 'block-key'`), waiting for an unblock
   * (docs/scale.md#per-key-order); empty when none is.
   */
  blockedKeys: string[];
}

/** The state a row shows (pure): a tripped breaker pauses its consumers, so it is told before a pause. */
export function runStateOf(state: Pick<SubscriptionState, 'connected' | 'tripped' | 'paused' | 'overdue'>) {
  if (!state.connected) return 'disconnected' as const;
  if (state.tripped) return 'tripped' as const;
  if (state.paused) return 'paused' as const;
  if (state.overdue > 0) return 'stalled' as const;
  return 'running' as const;
}

interface Reading {
  at: number;
  handled: number;
  failed: number;
  rates: { handled: number; failed: number } | null;
}

/**
 * Turns counters into rates per second. Readings closer than `minimumSpanMs` to the one a rate starts from keep the
 * last rate (two pages polling at once do not make a rate of a few milliseconds); a counter that went down (the
 * consumer was opened again) starts over.
 */
export class RateMeter {
  private readonly readings = new Map<string, Reading>();

  constructor(private readonly minimumSpanMs = 1000) {}

  rates(key: string, handled: number, failed: number, now: number): { handled: number; failed: number } | null {
    const last = this.readings.get(key);
    if (last === undefined || handled < last.handled || failed < last.failed || now < last.at) {
      this.readings.set(key, { at: now, handled, failed, rates: null });
      return null;
    }
    const span = now - last.at;
    if (span < this.minimumSpanMs) return last.rates;
    const rates = { handled: ((handled - last.handled) * 1000) / span, failed: ((failed - last.failed) * 1000) / span };
    this.readings.set(key, { at: now, handled, failed, rates });
    return rates;
  }

  /** Forgets the consumers not in `keys` (closed, or gone with their pattern's topic). */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const key of this.readings.keys()) if (!keys.has(key)) this.readings.delete(key);
  }
}

/** The key of a consumer's counters: its topic and subscription. */
export const consumerKey = (state: Pick<SubscriptionState, 'topic' | 'subscription'>): string =>
  `${state.topic}\n${state.subscription}`;

/**
 * The rows of the server's consumers (pure but for the meter it updates). `statsOf` gives the stats of a consumer's
 * topic: null for no such topic, undefined when they could not be read.
 */
export function subscriptionRows(
  states: readonly SubscriptionState[],
  statsOf: (topic: string) => TopicStats | undefined,
  meter: RateMeter,
  now: number,
): DashboardSubscription[] {
  meter.keepOnly(new Set(states.map(consumerKey)));
  return states.map((state) => {
    const rates = meter.rates(consumerKey(state), state.handled, state.failed, now);
    const stats = statsOf(state.topic);
    const lag = stats === undefined ? null : lagOf(stats, state.subscription, now);
    return {
      topic: state.topic,
      subscription: state.subscription,
      type: state.type,
      target: { topic: state.retryOf ?? state.topic, subscription: state.subscription },
      state: runStateOf(state),
      active: state.active,
      handledPerSecond: rates && round(rates.handled),
      failedPerSecond: rates && round(rates.failed),
      handled: state.handled,
      failed: state.failed,
      backlog: lag && lag.backlog,
      lagMs: lag && lag.ageMs,
      blockedKeys: state.blockedKeys ?? [],
    };
  });
}

const round = (perSecond: number): number => Math.round(perSecond * 10) / 10;
