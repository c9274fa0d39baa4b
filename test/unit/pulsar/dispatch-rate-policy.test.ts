// The admin call that sets a subscription's dispatch rate, against a fake fetch: its URL, method, body and headers,
// and how a refusal and an unreachable admin API are told.
import { jest } from '@jest/globals';
import {
  DispatchRateRefused,
  dispatchRateBody,
  dispatchRateUrl,
  setSubscriptionDispatchRate,
} from '../../../lib/pulsar/dispatch-rate-policy.js';

const access = { adminUrl: 'http://broker:8080/', headers: async () => ({ Authorization: 'Bearer t' }) };

describe('setSubscriptionDispatchRate', () => {
  it("names the subscription's own policy, each part of the path encoded", () => {
    expect(dispatchRateUrl('http://b:8080/', 'persistent://public/default/orders', 'babelqueue')).toBe(
      'http://b:8080/admin/v2/persistent/public/default/orders/babelqueue/dispatchRate',
    );
    expect(dispatchRateUrl('http://b:8080', 'persistent://t/ns/a b', 'sub/1')).toBe(
      'http://b:8080/admin/v2/persistent/t/ns/a%20b/sub%2F1/dispatchRate',
    );
  });

  it('POSTs messages per second over a one-second period, with no byte limit', async () => {
    const fetch = jest.fn(
      async (_url: string | URL | Request, _init?: RequestInit) => new Response(null, { status: 204 }),
    );
    await setSubscriptionDispatchRate({
      access,
      topic: 'persistent://public/default/orders',
      subscription: 'babelqueue',
      perSecond: 100,
      timeoutMs: 1000,
      fetch: fetch as unknown as typeof globalThis.fetch,
    });
    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe('http://broker:8080/admin/v2/persistent/public/default/orders/babelqueue/dispatchRate');
    expect(init?.method).toBe('POST');
    expect(init?.headers).toEqual({ Authorization: 'Bearer t', 'Content-Type': 'application/json' });
    expect(JSON.parse(init?.body as string)).toEqual({
      dispatchThrottlingRateInMsg: 100,
      dispatchThrottlingRateInByte: -1,
      ratePeriodInSecond: 1,
      relativeToPublishRate: false,
    });
    expect(init?.signal).toBeInstanceOf(AbortSignal);
    expect(dispatchRateBody(7).dispatchThrottlingRateInMsg).toBe(7);
  });

  it('rejects with the status and the broker’s reason when refused', async () => {
    const fetch = async () => new Response('{"reason":"Topic level policies is disabled"}', { status: 405 });
    const call = setSubscriptionDispatchRate({
      access,
      topic: 'persistent://public/default/o',
      subscription: 's',
      perSecond: 1,
      timeoutMs: 1000,
      fetch: fetch as unknown as typeof globalThis.fetch,
    });
    await expect(call).rejects.toThrow(DispatchRateRefused);
    await expect(call).rejects.toMatchObject({
      status: 405,
      message: expect.stringMatching(/answered HTTP 405: \{"reason":"Topic level policies is disabled"\}/),
    });
  });

  it('rejects with no status when the admin API does not answer', async () => {
    const fetch = async () => {
      throw new TypeError('fetch failed');
    };
    await expect(
      setSubscriptionDispatchRate({
        access,
        topic: 'persistent://public/default/o',
        subscription: 's',
        perSecond: 1,
        timeoutMs: 1000,
        fetch: fetch as unknown as typeof globalThis.fetch,
      }),
    ).rejects.toMatchObject({ status: null, message: expect.stringMatching(/did not answer \(fetch failed\)/) });
  });
});
