// Subscription replay without a broker: the point's parsing, and the admin calls in order against a fake admin
// API (count on a temporary subscription that is always removed, refuse before skipping, reset only with yes).
import { parseMessageId, replayPointOf } from '../../../lib/replay/replay-point.js';
import { replaySubscription, SubscriptionReplayError } from '../../../lib/replay/index.js';

describe('parseMessageId', () => {
  it.each([
    ['(12,3,-1,-1)', { ledgerId: 12, entryId: 3, partitionIndex: -1 }],
    ['(12,3,2,0)', { ledgerId: 12, entryId: 3, partitionIndex: 2 }],
    ['12:3', { ledgerId: 12, entryId: 3, partitionIndex: -1 }],
    [' 12:3:1:-1 ', { ledgerId: 12, entryId: 3, partitionIndex: 1 }],
  ])('reads %s', (text, id) => {
    expect(parseMessageId(text)).toEqual(id);
  });

  it.each(['', '12', '(a,b)', '12:-3', '-1:2', '1:2:3:4:5', '1.5:2', '(1,2,-2)'])('refuses %j', (text) => {
    expect(() => parseMessageId(text)).toThrow(/is not a message id: use \(ledger,entry,partition,batch\)/);
  });
});

describe('replayPointOf', () => {
  it('takes exactly one of since and messageId; since neither in the future nor not a time', () => {
    expect(replayPointOf({ since: new Date(1000) }, 2000)).toEqual({ since: 1000 });
    expect(replayPointOf({ messageId: '1:2' }, 0)).toEqual({
      messageId: { ledgerId: 1, entryId: 2, partitionIndex: -1 },
      text: '1:2',
    });
    expect(() => replayPointOf({}, 0)).toThrow('a replay needs exactly one of since (a time) and messageId');
    expect(() => replayPointOf({ since: 1, messageId: '1:2' }, 5)).toThrow(/exactly one/);
    expect(() => replayPointOf({ since: 3000 }, 2000)).toThrow(/is in the future/);
    expect(() => replayPointOf({ since: Number.NaN }, 2000)).toThrow('since must be a Date or epoch milliseconds');
  });
});

/** A fake admin API: one topic, its subscriptions' backlogs, and the calls made, in order. */
function fakeAdmin(options: { backlog: number; fromPoint: number; topicExists?: boolean; failCount?: boolean }) {
  const calls: string[] = [];
  const subscriptions = new Map<string, number>([['billing', options.backlog]]);
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
  const fake = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const path = url.pathname.replace('/admin/v2/persistent/public/default/orders', '');
    const method = init?.method ?? 'GET';
    calls.push(`${method} ${path}`);
    if (path === '/partitions') return json({}, 404);
    if (path === '/stats')
      return options.topicExists === false
        ? json({}, 404)
        : json({ subscriptions: Object.fromEntries([...subscriptions].map(([k, v]) => [k, { msgBacklog: v }])) });
    const temp = /^\/subscription\/(babelqueue-replay-count-[0-9a-f]+)/.exec(path)?.[1];
    if (temp && method === 'PUT') subscriptions.set(temp, 99);
    if (temp && method === 'POST') {
      if (options.failCount) return new Response('no', { status: 412 });
      subscriptions.set(temp, options.fromPoint);
    }
    if (temp && method === 'DELETE') subscriptions.delete(temp);
    return new Response(null, { status: 204 });
  }) as typeof fetch;
  return { calls, subscriptions, admin: { adminUrl: 'http://admin:8080', fetch: fake } };
}

const strip = (calls: string[]) => calls.map((call) => call.replace(/babelqueue-replay-count-[0-9a-f]+/, 'COUNT'));

describe('replaySubscription', () => {
  it('counts on a temporary subscription, removes it, and moves nothing on a dry run', async () => {
    const { calls, subscriptions, admin } = fakeAdmin({ backlog: 2, fromPoint: 7 });
    const result = await replaySubscription(
      admin,
      { topic: 'orders', subscription: 'billing', since: 1000 },
      () => 5000,
    );
    expect(result).toEqual({
      topic: 'persistent://public/default/orders',
      subscription: 'billing',
      from: 'since 1970-01-01T00:00:01.000Z',
      messages: 7,
      unacknowledged: 2,
      dryRun: true,
    });
    expect(strip(calls)).toEqual([
      'GET /partitions',
      'GET /stats',
      'PUT /subscription/COUNT',
      'POST /subscription/COUNT/resetcursor/1000',
      'GET /stats',
      'DELETE /subscription/COUNT',
    ]);
    expect([...subscriptions.keys()]).toEqual(['billing']);
  });

  it('resets the subscription with yes: true (to a message id, that message included)', async () => {
    const { calls, admin } = fakeAdmin({ backlog: 0, fromPoint: 3 });
    const result = await replaySubscription(admin, {
      topic: 'orders',
      subscription: 'billing',
      messageId: '(5,6,-1,-1)',
      yes: true,
    });
    expect(result).toMatchObject({ dryRun: false, messages: 3, from: 'message (5,6,-1,-1)' });
    expect(strip(calls).slice(-1)).toEqual(['POST /subscription/billing/resetcursor']);
  });

  it('refuses to move past unacknowledged messages from before the point', async () => {
    const { calls, admin } = fakeAdmin({ backlog: 10, fromPoint: 4 });
    const replay = replaySubscription(
      admin,
      { topic: 'orders', subscription: 'billing', since: 1000, yes: true },
      () => 5000,
    );
    await expect(replay).rejects.toThrow(
      'subscription billing of persistent://public/default/orders has 6 unacknowledged message(s) published before ' +
        'since 1970-01-01T00:00:01.000Z: a replay would skip them. Let it catch up, then replay',
    );
    expect(strip(calls).filter((call) => call.includes('billing'))).toEqual([]);
  });

  it('removes the temporary subscription when counting fails, and names a missing topic or subscription', async () => {
    const failing = fakeAdmin({ backlog: 0, fromPoint: 0, failCount: true });
    await expect(
      replaySubscription(failing.admin, { topic: 'orders', subscription: 'billing', since: 1 }),
    ).rejects.toMatchObject({ kind: 'refused' });
    expect([...failing.subscriptions.keys()]).toEqual(['billing']);
    const missing = fakeAdmin({ backlog: 0, fromPoint: 0, topicExists: false });
    await expect(
      replaySubscription(missing.admin, { topic: 'orders', subscription: 'billing', since: 1 }),
    ).rejects.toMatchObject({
      kind: 'missing',
      message: 'topic persistent://public/default/orders does not exist (nothing was created)',
    });
    const other = fakeAdmin({ backlog: 0, fromPoint: 0 });
    await expect(replaySubscription(other.admin, { topic: 'orders', subscription: 'audit', since: 1 })).rejects.toThrow(
      'persistent://public/default/orders has no subscription audit (nothing was created); it has: billing',
    );
  });

  it('says a bad request is a usage error before calling anything', async () => {
    const { calls, admin } = fakeAdmin({ backlog: 0, fromPoint: 0 });
    for (const options of [
      { topic: '', subscription: 'billing', since: 1 },
      { topic: 'orders', subscription: ' ', since: 1 },
      { topic: 'orders', subscription: 'billing' },
    ]) {
      const error = await replaySubscription(admin, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SubscriptionReplayError);
      expect((error as SubscriptionReplayError).kind).toBe('usage');
    }
    expect(calls).toEqual([]);
  });
});
