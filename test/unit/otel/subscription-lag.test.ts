// The lag gauges without a broker: reading the admin API's stats, one call per topic per poll, a topic that cannot
// be read, and the option.
import { jest } from '@jest/globals';
import { depthOf, lagOf, LagGauges, type LagTarget } from '../../../lib/otel/subscription-lag.js';
import { lagTargetsOf } from '../../../lib/nest/server/lag-targets.js';
import { checkLagGauges } from '../../../lib/nest/options/lag-gauge-option.js';
import { raiseStandardError } from '../../../lib/options/option-table.js';
import type { Subscription } from '../../../lib/nest/server/subscription.js';

const T = 'persistent://public/default/orders';

describe('lagOf and depthOf (pure)', () => {
  it("reads a subscription's backlog and the age of its oldest waiting message", () => {
    const stats = { subscriptions: { s: { msgBacklog: 7, earliestMsgPublishTimeInBacklog: 1_000 } } };
    expect(lagOf(stats, 's', 4_000)).toEqual({ backlog: 7, ageMs: 3_000 });
    expect(lagOf(stats, 'other', 4_000)).toEqual({ backlog: 0, ageMs: 0 });
    expect(
      lagOf({ subscriptions: { s: { msgBacklog: 0, earliestMsgPublishTimeInBacklog: 1_000 } } }, 's', 4_000),
    ).toEqual({
      backlog: 0,
      ageMs: 0,
    });
    expect(lagOf(null, 's', 1)).toEqual({ backlog: 0, ageMs: 0 });
  });

  it("takes a dead-letter topic's depth as its largest subscription backlog", () => {
    expect(depthOf({ subscriptions: { a: { msgBacklog: 2 }, b: { msgBacklog: 5 } } })).toBe(5);
    expect(depthOf({ subscriptions: {} })).toBe(0);
    expect(depthOf(null)).toBe(0);
  });
});

describe('LagGauges', () => {
  const targets: LagTarget[] = [
    { topic: T, subscription: 'a', retryTopic: `${T}.a.retry`, deadLetterTopic: `${T}.dlq` },
    { topic: T, subscription: 'b', retryTopic: null, deadLetterTopic: `${T}.dlq` },
  ];
  const statsFor = (url: string) =>
    url.includes('.retry/')
      ? { subscriptions: { a: { msgBacklog: 4 } } }
      : url.includes('.dlq/')
        ? { subscriptions: { redrive: { msgBacklog: 9 } } }
        : { subscriptions: { a: { msgBacklog: 3, earliestMsgPublishTimeInBacklog: 500 }, b: { msgBacklog: 1 } } };

  it('asks each topic once per poll, however many subscriptions read it, and reports each subscription', async () => {
    const fetch = jest.fn(async (url: string | URL | Request) => Response.json(statsFor(String(url))));
    const gauges = new LagGauges(
      { adminUrl: 'http://admin:8080/', intervalMs: 1000, fetch: fetch as typeof globalThis.fetch, now: () => 2_500 },
      () => targets,
      () => {},
    );
    await Promise.all([gauges.poll(), gauges.poll()]);
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(String(fetch.mock.calls[0]![0])).toBe(
      'http://admin:8080/admin/v2/persistent/public/default/orders/stats?getPreciseBacklog=true&getEarliestTimeInBacklog=true',
    );
    expect(gauges.readings()).toEqual([
      { ...targets[0], backlog: 3, oldestUnackedAgeMs: 2_000, retryBacklog: 4, deadLetterDepth: 9 },
      { ...targets[1], backlog: 1, oldestUnackedAgeMs: 0, retryBacklog: 0, deadLetterDepth: 9 },
    ]);
  });

  it("reads a partitioned topic's summed stats, found once, then asked for directly", async () => {
    const clock = { now: 2_500 };
    const fetch = jest.fn(async (url: string | URL | Request) => {
      const text = String(url);
      if (text.includes('/orders/partitioned-stats?perPartition=false&'))
        return Response.json({ subscriptions: { b: { msgBacklog: 7 } } });
      return new Response('not found', { status: 404 });
    });
    const gauges = new LagGauges(
      {
        adminUrl: 'http://admin:8080',
        intervalMs: 1000,
        fetch: fetch as typeof globalThis.fetch,
        now: () => clock.now,
      },
      () => [targets[1]!],
      () => {},
    );
    await gauges.poll();
    expect(gauges.readings()[0]).toMatchObject({ backlog: 7, deadLetterDepth: 0 });
    // orders: stats (404), then partitioned-stats; orders.dlq: stats (404), partitioned-stats (404).
    expect(fetch).toHaveBeenCalledTimes(4);
    await gauges.poll();
    // Then one call each: orders straight to its sum, the missing dead-letter topic not asked about partitions again.
    expect(fetch).toHaveBeenCalledTimes(6);
    expect(String(fetch.mock.calls[4]![0])).toContain(
      '/orders/partitioned-stats?perPartition=false&getPreciseBacklog=true',
    );
    clock.now += 60_000;
    await gauges.poll();
    expect(fetch).toHaveBeenCalledTimes(9); // a minute on, the missing topic is asked again
  });

  it('keeps the last figures of a topic it cannot read, with one warning until it can again', async () => {
    let down = false;
    const fetch = jest.fn(async (url: string | URL | Request) => {
      if (down) throw new Error('ECONNREFUSED');
      return Response.json(statsFor(String(url)));
    });
    const warnings: string[] = [];
    const gauges = new LagGauges(
      { adminUrl: 'http://admin:8080', intervalMs: 1000, fetch: fetch as typeof globalThis.fetch, now: () => 2_500 },
      () => [targets[1]!],
      (line) => warnings.push(line),
    );
    await gauges.poll();
    down = true;
    await gauges.poll();
    await gauges.poll();
    expect(gauges.readings()[0]).toMatchObject({ backlog: 1, deadLetterDepth: 9 });
    expect(warnings).toHaveLength(2); // one per topic, not one per poll
    expect(warnings[0]).toMatch(/lag gauges: cannot read the stats of .* \(ECONNREFUSED\); keeping its last figures/);
  });
});

describe('lagTargetsOf and the option', () => {
  it('reports each subscription once, its retry and dead-letter topics as full names', () => {
    const model = {
      fullTopic: T,
      name: 's',
      retryTopic: 'orders.s.retry',
      deadLetterTopic: 'orders.dlq',
    } as unknown as Subscription;
    expect(lagTargetsOf([model, model])).toEqual([
      { topic: T, subscription: 's', retryTopic: `${T}.s.retry`, deadLetterTopic: `${T}.dlq` },
    ]);
  });

  it('checks lagGauges', () => {
    const check = (value: unknown) => checkLagGauges(value, 'options.lagGauges', raiseStandardError);
    expect(check(undefined)).toBeUndefined();
    expect(check({ adminUrl: 'http://b:8080' })).toEqual({ adminUrl: 'http://b:8080', intervalMs: 15_000 });
    expect(() => check({ adminUrl: 'nope' })).toThrow(/options\.lagGauges\.adminUrl must be the admin API's URL/);
    expect(() => check({ adminUrl: 'http://b:8080', intervalMs: 10 })).toThrow(/intervalMs must be an integer >= 1000/);
    expect(() => check({ adminUrl: 'http://b:8080', every: 1 })).toThrow(/unknown key\(s\) every/);
  });
});
