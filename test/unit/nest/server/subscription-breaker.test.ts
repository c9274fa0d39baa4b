// A subscription's breaker at work, on fake timers: it pauses the subscription when it trips, marks it tripped,
// resumes it to probe after openMs and stops its timer on close.
import { jest } from '@jest/globals';
import type { SettledEvent } from '../../../../lib/consumer/index.js';
import { SubscriptionBreaker, SubscriptionBreakers } from '../../../../lib/nest/server/subscription-breaker.js';
import type { Subscription } from '../../../../lib/nest/server/subscription.js';

const options = { failureRatio: 1, windowMs: 10_000, minimumMessages: 2, openMs: 1_000, probes: 1 };
const event = (action: SettledEvent['action']) =>
  ({ topic: 'orders', messageId: 'm', urn: 'urn:x', action }) as SettledEvent;

function breakerOf(now: () => number = () => Date.now()) {
  const model = { label: 'orders (subscription s)', topic: 'orders', name: 's', tripped: false };
  const holds: boolean[] = [];
  const lines: string[] = [];
  const breaker = new SubscriptionBreaker(model as unknown as Subscription, options, {
    hold: async (_model, held) => {
      holds.push(held);
    },
    logger: { log: (line) => lines.push(line), warn: (line) => lines.push(`WARN ${line}`) },
    now,
  });
  return { model, holds, lines, breaker };
}

describe('SubscriptionBreaker (fake timers)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('pauses on a trip, probes after openMs, closes on a success: one line per change', () => {
    const { model, holds, lines, breaker } = breakerOf();
    breaker.settled(event('retry'));
    breaker.settled(event('dead-letter'));
    expect(breaker.state).toBe('closed');
    breaker.settled(event('retry'));
    expect(breaker.state).toBe('open');
    expect(model.tripped).toBe(true);
    expect(holds).toEqual([true]);
    jest.advanceTimersByTime(999);
    expect(breaker.state).toBe('open');
    jest.advanceTimersByTime(1);
    expect(breaker.state).toBe('half-open');
    expect(holds).toEqual([true, false]);
    breaker.settled(event('ack'));
    expect(breaker.state).toBe('closed');
    expect(model.tripped).toBe(false);
    expect(lines).toEqual([
      expect.stringMatching(
        /^WARN circuit breaker of orders \(subscription s\) closed -> open: .*paused until it probes$/,
      ),
      'circuit breaker of orders (subscription s) open -> half-open: 1000 ms passed: probing',
      'circuit breaker of orders (subscription s) half-open -> closed: 1 probe(s) succeeded',
    ]);
  });

  it('probes when its clock says so, though the timer fires early (a loop turn that ran long)', () => {
    // From the trip on, the breaker's clock runs 30 ms behind the timers, as Date.now() does when a timer was dated from
    // a loop time that lagged.
    let lag = 0;
    const { holds, breaker } = breakerOf(() => Date.now() - lag);
    breaker.settled(event('retry'));
    breaker.settled(event('retry'));
    expect(breaker.state).toBe('open');
    lag = 30;
    jest.advanceTimersByTime(1_000);
    expect(breaker.state).toBe('open');
    jest.advanceTimersByTime(30);
    expect(breaker.state).toBe('half-open');
    expect(holds).toEqual([true, false]);
  });

  it('does not probe once closed', () => {
    const { holds, breaker } = breakerOf();
    breaker.settled(event('retry'));
    breaker.settled(event('retry'));
    breaker.close();
    jest.advanceTimersByTime(5_000);
    expect(holds).toEqual([true]);
    expect(breaker.state).toBe('open');
  });

  it('a subscription without circuitBreaker has no breaker; one with it has its own', () => {
    const deps = { hold: async () => {}, logger: { log: () => {}, warn: () => {} } };
    const breakers = new SubscriptionBreakers(deps);
    expect(breakers.of({ circuitBreaker: undefined } as Subscription)).toBeUndefined();
    const subscription = { circuitBreaker: options } as Subscription;
    expect(breakers.of(subscription)).toBe(breakers.of(subscription));
    expect(breakers.of({ circuitBreaker: options } as Subscription)).not.toBe(breakers.of(subscription));
  });
});
