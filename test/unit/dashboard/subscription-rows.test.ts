// The subscriptions view's pure parts: what counts as handled or failed, the state a row shows, rates from two
// readings of the counters, and rows with backlog and lag from a topic's stats.
import { settlementKind } from '../../../lib/consumer/settlement-counts.js';
import { subscriptionState } from '../../support/subscription-state.js';
import { RateMeter, runStateOf, subscriptionRows } from '../../../lib/dashboard/subscription-rows.js';

const state = subscriptionState;

describe('settlementKind', () => {
  it('counts an acknowledgement as handled and every failed attempt as failed', () => {
    expect(settlementKind({ action: 'ack' })).toBe('handled');
    for (const action of ['retry', 'dead-letter', 'drop', 'nack', 'ack-failed'] as const)
      expect(settlementKind({ action })).toBe('failed');
  });

  it('does not count a release: another instance takes the message, nothing failed', () => {
    expect(settlementKind({ action: 'nack', unknownUrn: 'release' })).toBeNull();
  });
});

describe('runStateOf', () => {
  it('tells the most pressing state: disconnected, tripped (its consumers are paused too), paused, stalled', () => {
    expect(runStateOf(state())).toBe('running');
    expect(runStateOf(state({ overdue: 1 }))).toBe('stalled');
    expect(runStateOf(state({ paused: true, overdue: 1 }))).toBe('paused');
    expect(runStateOf(state({ paused: true, tripped: true }))).toBe('tripped');
    expect(runStateOf(state({ connected: false, tripped: true }))).toBe('disconnected');
  });
});

describe('RateMeter', () => {
  it('has no rate from one reading, then the counters per second between readings', () => {
    const meter = new RateMeter();
    expect(meter.rates('a', 10, 0, 1000)).toBeNull();
    expect(meter.rates('a', 30, 4, 3000)).toEqual({ handled: 10, failed: 2 });
    expect(meter.rates('a', 30, 4, 5000)).toEqual({ handled: 0, failed: 0 });
  });

  it('keeps the last rate for a reading too close to the previous one (two pages polling)', () => {
    const meter = new RateMeter(1000);
    meter.rates('a', 0, 0, 0);
    expect(meter.rates('a', 50, 0, 1000)).toEqual({ handled: 50, failed: 0 });
    expect(meter.rates('a', 52, 0, 1100)).toEqual({ handled: 50, failed: 0 });
    // The next rate spans from the reading the last rate ended at.
    expect(meter.rates('a', 70, 0, 2000)).toEqual({ handled: 20, failed: 0 });
  });

  it('starts over when a counter went down (the consumer opened again)', () => {
    const meter = new RateMeter();
    meter.rates('a', 100, 0, 0);
    expect(meter.rates('a', 3, 0, 2000)).toBeNull();
    expect(meter.rates('a', 5, 0, 4000)).toEqual({ handled: 1, failed: 0 });
  });

  it('keeps each consumer apart and forgets those gone', () => {
    const meter = new RateMeter();
    meter.rates('a', 0, 0, 0);
    meter.rates('b', 0, 0, 0);
    meter.keepOnly(new Set(['a']));
    expect(meter.rates('a', 10, 0, 1000)).toEqual({ handled: 10, failed: 0 });
    expect(meter.rates('b', 10, 0, 1000)).toBeNull();
  });
});

describe('subscriptionRows', () => {
  const now = 1_000_000;
  const stats = {
    subscriptions: {
      babelqueue: { msgBacklog: 42, earliestMsgPublishTimeInBacklog: now - 90_000 },
      audit: { msgBacklog: 0, earliestMsgPublishTimeInBacklog: 0 },
    },
  };

  it('gives each consumer its backlog and lag from its topic stats, and rates from the second reading on', () => {
    const meter = new RateMeter();
    const statsOf = () => stats;
    const first = subscriptionRows([state({ handled: 5 })], statsOf, meter, now - 2000);
    expect(first[0]).toMatchObject({ handledPerSecond: null, failedPerSecond: null, backlog: 42 });
    const [row] = subscriptionRows([state({ handled: 25, failed: 1 })], statsOf, meter, now);
    expect(row).toEqual({
      topic: 'persistent://public/default/orders',
      subscription: 'babelqueue',
      type: 'Shared',
      target: { topic: 'persistent://public/default/orders', subscription: 'babelqueue' },
      state: 'running',
      active: 0,
      handledPerSecond: 10,
      failedPerSecond: 0.5,
      handled: 25,
      failed: 1,
      backlog: 42,
      lagMs: 90_000,
      blockedKeys: [],
    });
  });

  it('shows no backlog or lag for a topic whose stats could not be read, and 0 for a topic the broker lacks', () => {
    const meter = new RateMeter();
    const rows = subscriptionRows(
      [state({ topic: 'unread' }), state({ topic: 'absent' })],
      (topic) => (topic === 'absent' ? null : undefined),
      meter,
      now,
    );
    expect(rows.map(({ backlog, lagMs }) => ({ backlog, lagMs }))).toEqual([
      { backlog: null, lagMs: null },
      { backlog: 0, lagMs: 0 },
    ]);
  });

  it('pauses a retry topic row through the topic it retries, and keeps subscriptions of one topic apart', () => {
    const retry = 'persistent://public/default/orders.audit.retry';
    const rows = subscriptionRows(
      [
        state({ subscription: 'audit', paused: true }),
        state({ topic: retry, subscription: 'audit', retryOf: 'orders' }),
      ],
      () => stats,
      new RateMeter(),
      now,
    );
    expect(rows[0]).toMatchObject({ state: 'paused', backlog: 0, lagMs: 0 });
    expect(rows[1]!.target).toEqual({ topic: 'orders', subscription: 'audit' });
  });
});
