// One subscription's circuit breaker at work (docs/retries.md#circuit-breaker): the pure state machine
// (lib/consumer/circuit-breaker.ts) fed with the subscription's settled deliveries; opening it pauses the
// subscription's consumers, so held messages wait unacknowledged instead of using up their attempts, and after
// `openMs` they resume to probe.
import {
  breakerOutcomeOf,
  CircuitBreaker,
  type CircuitBreakerChange,
  type CircuitBreakerOptions,
} from '../../consumer/circuit-breaker.js';
import type { SettledEvent } from '../../consumer/index.js';
import { recordBreakerChange } from '../../otel/breaker-events.js';
import type { Subscription } from './subscription.js';

export interface SubscriptionBreakerDeps {
  /** Pauses (true) or resumes (false) the subscription's consumers, leaving a pause by hand as it is. */
  hold(subscription: Subscription, held: boolean): Promise<void>;
  logger: { log(message: string): void; warn(message: string): void };
  now?: () => number;
}

export class SubscriptionBreaker {
  private readonly breaker: CircuitBreaker;
  private probeTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly subscription: Subscription,
    options: CircuitBreakerOptions,
    private readonly deps: SubscriptionBreakerDeps,
  ) {
    this.breaker = new CircuitBreaker(options, deps.now ?? Date.now);
  }

  get state() {
    return this.breaker.state;
  }

  /** A delivery of this subscription was settled. */
  settled(event: SettledEvent): void {
    const outcome = breakerOutcomeOf(event);
    if (outcome === null || this.closed) return;
    const change = this.breaker.record(outcome);
    if (change) this.apply(change);
  }

  /** Stops the probe timer (the server closes). */
  close(): void {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  private apply(change: CircuitBreakerChange): void {
    const { subscription, deps } = this;
    subscription.tripped = change.to !== 'closed';
    const line = `circuit breaker of ${subscription.label} ${change.from} -> ${change.to}: ${change.why}`;
    if (change.to === 'open') deps.logger.warn(`${line}; paused until it probes`);
    else deps.logger.log(line);
    recordBreakerChange({ topic: subscription.topic, subscription: subscription.name, ...change });
    if (change.to === 'open') {
      void deps.hold(subscription, true);
      this.scheduleProbe();
    } else if (change.to === 'half-open') void deps.hold(subscription, false);
  }

  private scheduleProbe(): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    const due = this.breaker.probeAt;
    if (due === null) return;
    const now = (this.deps.now ?? Date.now)();
    this.probeTimer = setTimeout(
      () => {
        this.probeTimer = null;
        if (this.closed) return;
        const change = this.breaker.probe();
        if (change) this.apply(change);
        // A timer may fire before the breaker's clock says the wait is over (libuv dates a timer from the loop's time,
        // which lags behind while a turn runs long, as under load): it waits the rest instead of staying open for ever.
        else if (this.breaker.state === 'open') this.scheduleProbe();
      },
      Math.max(1, due - now),
    );
    // A waiting probe must not keep the process alive on its own.
    this.probeTimer.unref?.();
  }
}

/** The breakers of a server, one per subscription (also one per topic a pattern found); none when off. */
export class SubscriptionBreakers {
  private readonly breakers = new Map<Subscription, SubscriptionBreaker>();

  constructor(private readonly deps: SubscriptionBreakerDeps) {}

  /** The breaker of a subscription, made on first use; undefined when it has none (`circuitBreaker` unset). */
  of(subscription: Subscription): SubscriptionBreaker | undefined {
    const options = subscription.circuitBreaker;
    if (options === undefined) return undefined;
    let breaker = this.breakers.get(subscription);
    if (!breaker)
      this.breakers.set(subscription, (breaker = new SubscriptionBreaker(subscription, options, this.deps)));
    return breaker;
  }

  close(): void {
    for (const breaker of this.breakers.values()) breaker.close();
  }
}
