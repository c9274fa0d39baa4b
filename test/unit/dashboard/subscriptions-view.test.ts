// The subscriptions view against a stand-in server and admin API: one admin call per topic per reading (also with
// two pages polling at once), what a missing server or admin API shows, and pause / resume of one subscription.
import { BadRequestException } from '@nestjs/common';
import { checkDashboardOptions } from '../../../lib/dashboard/dashboard-options.js';
import {
  adminConnectionOf,
  SubscriptionsView,
  type SubscriptionControl,
} from '../../../lib/dashboard/dashboard-subscriptions.js';
import type { SubscriptionState } from '../../../lib/nest/server/subscription-set.js';
import { subscriptionState } from '../../support/subscription-state.js';
import type { SubscriptionTarget } from '../../../lib/nest/server/pause-control.js';
import type { SettledEvent } from '../../../lib/consumer/index.js';

const consumer = (topic: string, subscription: string, extra: Partial<SubscriptionState> = {}): SubscriptionState =>
  subscriptionState({ topic, subscription, ...extra });

class FakeServer implements SubscriptionControl {
  states: SubscriptionState[] = [
    consumer('persistent://public/default/orders', 'babelqueue'),
    consumer('persistent://public/default/orders', 'audit'),
    consumer('persistent://public/default/payments', 'babelqueue'),
  ];
  calls: Array<[string, SubscriptionTarget | undefined]> = [];
  describe(): SubscriptionState[] {
    return this.states;
  }
  async pause(target?: SubscriptionTarget): Promise<void> {
    if (target?.topic === 'nothing') throw new Error('pause(): this server consumes no topic "nothing"');
    this.calls.push(['pause', target]);
  }
  resume(target?: SubscriptionTarget): void {
    this.calls.push(['resume', target]);
  }
  async unblock(key: string, target?: SubscriptionTarget): Promise<SettledEvent[]> {
    if (key !== 'acct-7') throw new Error(`unblock(): key "${key}" is not blocked; blocked: "acct-7"`);
    this.calls.push(['unblock', target]);
    return [{ topic: 'orders', messageId: '1:2', urn: 'urn:x', action: 'dead-letter', written: true }];
  }
}

function fakeAdmin() {
  const urls: string[] = [];
  const fetch = (async (url: string) => {
    urls.push(url);
    const backlog = url.includes('/orders/') ? 7 : 0;
    return new Response(
      JSON.stringify({ subscriptions: { babelqueue: { msgBacklog: backlog }, audit: { msgBacklog: 1 } } }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  }) as typeof globalThis.fetch;
  return { urls, connection: { adminUrl: 'http://broker:8080', fetch } };
}

describe('SubscriptionsView', () => {
  it('reads each topic once per reading, whatever number of subscriptions and pages ask', async () => {
    const server = new FakeServer();
    const admin = fakeAdmin();
    const view = new SubscriptionsView({ server: () => server, admin: async () => admin.connection });
    const [first, second] = await Promise.all([view.list(), view.list()]);
    expect(second).toBe(first);
    expect(admin.urls.sort()).toEqual([
      'http://broker:8080/admin/v2/persistent/public/default/orders/stats?getPreciseBacklog=true&getEarliestTimeInBacklog=true',
      'http://broker:8080/admin/v2/persistent/public/default/payments/stats?getPreciseBacklog=true&getEarliestTimeInBacklog=true',
    ]);
    expect(first.statsProblem).toBeNull();
    expect(first.subscriptions.map(({ subscription, backlog }) => [subscription, backlog])).toEqual([
      ['babelqueue', 7],
      ['audit', 1],
      ['babelqueue', 0],
    ]);
  });

  it("shows a partitioned topic's backlog: its own name has no stats (404), its partitions' sum has", async () => {
    const server = new FakeServer();
    const urls: string[] = [];
    const connection = {
      adminUrl: 'http://broker:8080',
      fetch: (async (url: string) => {
        urls.push(url);
        if (url.includes('/orders/stats')) return new Response('not found', { status: 404 });
        const backlog = url.includes('/orders/partitioned-stats?perPartition=false') ? 9 : 0;
        return new Response(JSON.stringify({ subscriptions: { babelqueue: { msgBacklog: backlog } } }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      }) as typeof globalThis.fetch,
    };
    const view = new SubscriptionsView({ server: () => server, admin: async () => connection });
    const { subscriptions, statsProblem } = await view.list();
    expect(statsProblem).toBeNull();
    expect(subscriptions[0]).toMatchObject({ subscription: 'babelqueue', backlog: 9 });
    expect(urls.filter((url) => url.includes('/orders/'))).toHaveLength(2);
  });

  it('says there are no subscriptions in an app that only publishes, without asking the admin API', async () => {
    let asked = false;
    const admin = async () => {
      asked = true;
      return undefined;
    };
    const empty = new FakeServer();
    empty.states = [];
    for (const server of [null, empty]) {
      const view = new SubscriptionsView({ server: () => server, admin });
      await expect(view.list()).resolves.toEqual({ subscriptions: [], statsProblem: null });
    }
    expect(asked).toBe(false);
    await expect(
      new SubscriptionsView({ server: () => null, admin }).pause({ topic: 'orders', subscription: 'babelqueue' }),
    ).rejects.toThrow(/no subscriptions on this app/);
  });

  it('shows the rows without backlog when the admin API is unknown or fails, saying why', async () => {
    const server = new FakeServer();
    const unknown = await new SubscriptionsView({ server: () => server, admin: async () => undefined }).list();
    expect(unknown.statsProblem).toMatch(/forRoot\(\{ admin: \{ adminUrl \} \}\)/);
    expect(unknown.subscriptions.every(({ backlog, lagMs }) => backlog === null && lagMs === null)).toBe(true);
    const failing = {
      adminUrl: 'http://broker:8080',
      fetch: (async () => new Response('no', { status: 403 })) as typeof fetch,
    };
    const refused = await new SubscriptionsView({ server: () => server, admin: async () => failing }).list();
    expect(refused.statsProblem).toMatch(/HTTP 403/);
    expect(refused.subscriptions).toHaveLength(3);
  });

  it('pauses and resumes exactly the subscription named, and refuses a body that names none', async () => {
    const server = new FakeServer();
    const view = new SubscriptionsView({ server: () => server, admin: async () => undefined });
    const target = { topic: 'persistent://public/default/orders', subscription: 'audit' };
    await expect(view.pause(target)).resolves.toEqual({ paused: true });
    expect(view.resume(target)).toEqual({ resumed: true });
    expect(server.calls).toEqual([
      ['pause', target],
      ['resume', target],
    ]);
    for (const body of [{}, { topic: 'orders' }, { subscription: 'audit' }, { topic: 1, subscription: 'a' }])
      await expect(view.pause(body)).rejects.toBeInstanceOf(BadRequestException);
    await expect(view.pause({ topic: 'nothing', subscription: 'a' })).rejects.toThrow(/consumes no topic "nothing"/);
  });

  it('unblocks the key named on the subscription named, and refuses a body without a key or a key not blocked', async () => {
    const server = new FakeServer();
    server.states[0]!.blockedKeys = ['acct-7'];
    const view = new SubscriptionsView({ server: () => server, admin: async () => undefined });
    const { subscriptions } = await view.list();
    expect(subscriptions.map(({ blockedKeys }) => blockedKeys)).toEqual([['acct-7'], [], []]);
    const target = { topic: 'persistent://public/default/orders', subscription: 'babelqueue' };
    await expect(view.unblock({ ...target, key: 'acct-7' })).resolves.toEqual({
      unblocked: true,
      key: 'acct-7',
      settled: [{ action: 'dead-letter' }],
    });
    expect(server.calls).toEqual([['unblock', target]]);
    for (const body of [target, { ...target, key: '' }, { ...target, key: 7 }, { key: 'acct-7' }])
      await expect(view.unblock(body)).rejects.toBeInstanceOf(BadRequestException);
    await expect(view.unblock({ ...target, key: 'acct-8' })).rejects.toThrow(/key "acct-8" is not blocked/);
  });
});

describe('the admin API of the view', () => {
  it('is the one given, else the one of the app client (none for a client the library did not make)', async () => {
    await expect(adminConnectionOf({ adminUrl: 'http://broker:8080', token: 't' }, () => ({}))).resolves.toEqual({
      adminUrl: 'http://broker:8080',
      token: 't',
    });
    await expect(adminConnectionOf(undefined, () => ({}))).resolves.toBeUndefined();
  });

  it('is checked at forRoot', () => {
    const base = { topics: ['orders.dlq'], private: true };
    expect(() => checkDashboardOptions({ ...base, admin: { adminUrl: 'http://broker:8080' } })).not.toThrow();
    for (const admin of [{ adminUrl: 'not a url' }, { adminUrl: 'http://b:8080', token: '' }, null])
      expect(() => checkDashboardOptions({ ...base, admin } as never)).toThrow(/admin is \{ adminUrl/);
  });
});
