// The circuit breaker's state machine on a fake clock, its option check and which settled deliveries it counts.
import {
  breakerOutcomeOf,
  checkCircuitBreakerOptions,
  CircuitBreaker,
  DEFAULT_CIRCUIT_BREAKER,
} from '../../../lib/consumer/circuit-breaker.js';
import type { SettledEvent } from '../../../lib/consumer/index.js';
import { raiseStandardError } from '../../../lib/options/option-table.js';

function breakerOnFakeClock(overrides: Partial<typeof DEFAULT_CIRCUIT_BREAKER> = {}) {
  const clock = { now: 1_000_000 };
  const breaker = new CircuitBreaker(
    { failureRatio: 0.5, windowMs: 10_000, minimumMessages: 4, openMs: 5_000, probes: 2, ...overrides },
    () => clock.now,
  );
  return { breaker, clock };
}

describe('CircuitBreaker (fake clock)', () => {
  it('stays closed below the minimum of messages, whatever fails', () => {
    const { breaker } = breakerOnFakeClock();
    for (let i = 0; i < 3; i++) expect(breaker.record('failure')).toBeNull();
    expect(breaker.state).toBe('closed');
  });

  it('trips when the failure ratio over the window reaches the threshold', () => {
    const { breaker } = breakerOnFakeClock();
    expect(breaker.record('success')).toBeNull();
    expect(breaker.record('success')).toBeNull();
    expect(breaker.record('failure')).toBeNull();
    const change = breaker.record('failure');
    expect(change).toMatchObject({ from: 'closed', to: 'open' });
    expect(change!.why).toMatch(/2 of the last 4 message\(s\) failed within 10000 ms/);
    expect(breaker.state).toBe('open');
  });

  it('forgets outcomes older than the window', () => {
    const { breaker, clock } = breakerOnFakeClock();
    breaker.record('failure');
    breaker.record('failure');
    breaker.record('failure');
    clock.now += 10_001;
    // The three old failures fell out: one failure of four recent outcomes is under the threshold.
    for (const outcome of ['success', 'success', 'success', 'failure'] as const)
      expect(breaker.record(outcome)).toBeNull();
    expect(breaker.state).toBe('closed');
  });

  it('probes only after openMs, ignores outcomes that end while open, closes after the probes succeed', () => {
    const { breaker, clock } = breakerOnFakeClock();
    for (let i = 0; i < 4; i++) breaker.record('failure');
    expect(breaker.probeAt).toBe(clock.now + 5_000);
    expect(breaker.record('failure')).toBeNull();
    clock.now += 4_999;
    expect(breaker.probe()).toBeNull();
    clock.now += 1;
    expect(breaker.probe()).toMatchObject({ from: 'open', to: 'half-open' });
    expect(breaker.probeAt).toBeNull();
    expect(breaker.record('success')).toBeNull();
    expect(breaker.record('success')).toMatchObject({ from: 'half-open', to: 'closed' });
    // Closed again with an empty window: it takes the minimum of messages to trip once more.
    for (let i = 0; i < 3; i++) expect(breaker.record('failure')).toBeNull();
  });

  it('opens again when a probe fails, and waits openMs from then', () => {
    const { breaker, clock } = breakerOnFakeClock();
    for (let i = 0; i < 4; i++) breaker.record('failure');
    clock.now += 5_000;
    breaker.probe();
    breaker.record('success');
    clock.now += 100;
    expect(breaker.record('failure')).toMatchObject({ from: 'half-open', to: 'open', why: 'a probe failed' });
    expect(breaker.probeAt).toBe(clock.now + 5_000);
  });
});

describe('checkCircuitBreakerOptions', () => {
  const check = (value: unknown) => checkCircuitBreakerOptions(value, 'options.circuitBreaker', raiseStandardError);

  it('is off by default, takes true for the defaults and fills what is not given', () => {
    expect(check(undefined)).toBeUndefined();
    expect(check(false)).toBeUndefined();
    expect(check(true)).toEqual(DEFAULT_CIRCUIT_BREAKER);
    expect(check({ failureRatio: 0.8, openMs: 0 })).toEqual({
      ...DEFAULT_CIRCUIT_BREAKER,
      failureRatio: 0.8,
      openMs: 0,
    });
  });

  it('refuses unknown keys and values out of range, naming them', () => {
    expect(() => check({ ratio: 1 })).toThrow(/options\.circuitBreaker has unknown key\(s\) ratio/);
    expect(() => check({ failureRatio: 0 })).toThrow(
      /options\.circuitBreaker\.failureRatio must be a number in \(0, 1\]/,
    );
    expect(() => check({ minimumMessages: 0 })).toThrow(/minimumMessages must be an integer >= 1/);
    expect(() => check('on')).toThrow(/must be true, false or \{/);
  });
});

describe('breakerOutcomeOf', () => {
  const event = (fields: Partial<SettledEvent>): SettledEvent =>
    ({ topic: 't', messageId: 'm', urn: 'urn:x', action: 'ack', ...fields }) as SettledEvent;

  it('counts handler successes and failures only', () => {
    expect(breakerOutcomeOf(event({ action: 'ack' }))).toBe('success');
    expect(breakerOutcomeOf(event({ action: 'retry' }))).toBe('failure');
    expect(breakerOutcomeOf(event({ action: 'nack', reason: 'handler failed' }))).toBe('failure');
    expect(breakerOutcomeOf(event({ action: 'dead-letter', reason: 'failed' }))).toBe('failure');
    expect(breakerOutcomeOf(event({ action: 'dead-letter', reason: 'failed', nonRetriable: true }))).toBeNull();
    expect(breakerOutcomeOf(event({ action: 'dead-letter', reason: 'poison', urn: null }))).toBeNull();
    expect(breakerOutcomeOf(event({ action: 'retry', unknownUrn: 'fail' }))).toBeNull();
    expect(breakerOutcomeOf(event({ action: 'ack', urn: null }))).toBeNull();
    expect(breakerOutcomeOf(event({ action: 'ack-failed' }))).toBeNull();
  });
});
