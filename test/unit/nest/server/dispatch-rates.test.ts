// The dispatchRate option at work without a broker: one admin call per topic and subscription, the admin API of
// the client (or the option's), and a warning with the fix when the policy cannot be set. Last, a server under the
// testing kit sets the policy on a fake admin API when it starts.
import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { BabelHandler } from '../../../../lib/nest/index.js';
import { fixFor, SubscriptionDispatchRates } from '../../../../lib/nest/server/dispatch-rates.js';
import { DispatchRateRefused } from '../../../../lib/pulsar/dispatch-rate-policy.js';
import { PulsarWebSocketClient } from '../../../../lib/pulsar/websocket/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';
import { startService } from '../../../support/nest-app.js';

type Call = { url: string; init: RequestInit | undefined };

function fakeFetch(status = 204) {
  const calls: Call[] = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(url), init });
    return new Response(status === 204 ? null : 'refused', { status });
  };
  return { calls, fetch: fetch as typeof globalThis.fetch };
}

const logger = () => ({ log: jest.fn(), warn: jest.fn(), error: jest.fn() });
const target = (readsFrom: string, name = 'babelqueue') => ({ readsFrom, subscription: { name } });

describe('SubscriptionDispatchRates', () => {
  it('sets each topic and subscription once, the retry topic as its own', async () => {
    const { calls, fetch } = fakeFetch();
    const log = logger();
    const rates = new SubscriptionDispatchRates({
      setting: { perSecond: 100, adminUrl: 'http://admin:8080', token: 'secret' },
      client: {},
      logger: log,
      fetch,
    });
    await rates.apply([target('orders'), target('orders.babelqueue.retry')]);
    await rates.apply([target('orders'), target('persistent://t/ns/other', 'billing')]);
    expect(calls.map(({ url }) => url)).toEqual([
      'http://admin:8080/admin/v2/persistent/public/default/orders/babelqueue/dispatchRate',
      'http://admin:8080/admin/v2/persistent/public/default/orders.babelqueue.retry/babelqueue/dispatchRate',
      'http://admin:8080/admin/v2/persistent/t/ns/other/billing/dispatchRate',
    ]);
    expect(calls[0]!.init?.headers).toMatchObject({ Authorization: 'Bearer secret' });
    expect(JSON.parse(calls[0]!.init?.body as string)).toMatchObject({ dispatchThrottlingRateInMsg: 100 });
    expect(log.warn).not.toHaveBeenCalled();
    expect(log.log).toHaveBeenCalledWith(
      expect.stringMatching(/subscription babelqueue of persistent:\/\/public\/default\/orders at most 100 messages/),
    );
  });

  it("uses the admin API of a client the library made (the WebSocket client's own URL)", async () => {
    const { calls, fetch } = fakeFetch();
    const client = new PulsarWebSocketClient({ serviceUrl: 'http://broker.example:8080' });
    try {
      await new SubscriptionDispatchRates({ setting: { perSecond: 3 }, client, logger: logger(), fetch }).apply([
        target('o'),
      ]);
    } finally {
      await client.close();
    }
    expect(calls.map(({ url }) => url)).toEqual([
      'http://broker.example:8080/admin/v2/persistent/public/default/o/babelqueue/dispatchRate',
    ]);
  });

  it('warns, with the fix, when the client is not the library’s and no adminUrl is given', async () => {
    const { calls, fetch } = fakeFetch();
    const log = logger();
    await new SubscriptionDispatchRates({ setting: { perSecond: 3 }, client: {}, logger: log, fetch }).apply([
      target('o'),
    ]);
    expect(calls).toEqual([]);
    expect(log.warn).toHaveBeenCalledWith(expect.stringMatching(/admin API is unknown; give dispatchRate\.adminUrl/));
  });

  it('warns once per subscription when the broker refuses, and does not reject', async () => {
    const { fetch } = fakeFetch(403);
    const log = logger();
    const rates = new SubscriptionDispatchRates({
      setting: { perSecond: 3, adminUrl: 'http://admin:8080' },
      client: {},
      logger: log,
      fetch,
    });
    await rates.apply([target('o')]);
    await rates.apply([target('o')]);
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn).toHaveBeenCalledWith(
      expect.stringMatching(
        /dispatchRate not set on subscription babelqueue of .*\/o: .*HTTP 403: refused; the role needs/,
      ),
    );
  });

  it('names a fix for each kind of refusal', () => {
    expect(fixFor(new DispatchRateRefused('x', null))).toMatch(/check dispatchRate\.adminUrl/);
    expect(fixFor(new DispatchRateRefused('x', 401))).toMatch(/the role needs/);
    expect(fixFor(new DispatchRateRefused('x', 405))).toMatch(/topicLevelPoliciesEnabled=true/);
    expect(fixFor(new DispatchRateRefused('x', 404))).toMatch(/another cluster/);
    expect(fixFor(new DispatchRateRefused('x', 500))).toMatch(/broker log/);
  });
});

@Controller()
class Orders {
  @BabelHandler('urn:dr:orders:created')
  created() {}
}

describe('dispatchRate on a server (testing kit, fake admin API)', () => {
  it('sets the policy of its subscription when it starts', async () => {
    const received: { method?: string; url?: string; body: string }[] = [];
    const admin = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ method: request.method, url: request.url, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
    const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
    const service = await startService([Orders], {
      client: new InMemoryPulsar(),
      topics: 'orders',
      subscription: 'billing',
      dispatchRate: { perSecond: 25, adminUrl },
    });
    try {
      // Set before the server's start resolved.
      expect(received).toEqual([
        {
          method: 'POST',
          url: '/admin/v2/persistent/public/default/orders/billing/dispatchRate',
          body: JSON.stringify({
            dispatchThrottlingRateInMsg: 25,
            dispatchThrottlingRateInByte: -1,
            ratePeriodInSecond: 1,
            relativeToPublishRate: false,
          }),
        },
      ]);
    } finally {
      await service.close();
      await new Promise((resolve) => admin.close(resolve));
    }
  });
});
