// retry 'retry-topic' without a broker: the option, the subscription model's retry topic, the fan-out warning,
// and the fan-out on the testing kit (the same figures as test/integration/server/fan-out.test.ts).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarServer, EnvelopeCodec } from '../../../../lib/index.js';
import { pulsarProperties } from '../../../../lib/pulsar/index.js';
import { resolveServerOptions } from '../../../../lib/nest/server/server-options.js';
import { planSubscriptions } from '../../../../lib/nest/server/subscription-plan.js';
import { fanOutWarnings } from '../../../../lib/nest/server/server-lifecycle.js';
import { subscriptionLine } from '../../../../lib/nest/server/subscription-set.js';
import type { Binding } from '../../../../lib/nest/server/handler-routes.js';
import { BabelQueueTestHarness, InMemoryPulsar } from '../../../../lib/testing/index.js';
import { startService } from '../../../support/nest-app.js';

jest.setTimeout(30_000);

const binding = (subscription: string): Binding => ({ topic: 'orders', subscription, routes: new Map() });

describe("server option retry 'retry-topic'", () => {
  it('is accepted, and an unknown mode names every one', () => {
    const client = new InMemoryPulsar();
    expect(() => new BabelPulsarServer({ client, topics: 'orders', retry: 'retry-topic' })).not.toThrow();
    expect(() => new BabelPulsarServer({ client, topics: 'orders', retry: 'later' as 'nack' })).toThrow(
      /options\.retry must be 'republish', 'retry-topic', 'nack' or a producer, got the string "later"/,
    );
  });

  it('gives each subscription <topic>.<subscription>.retry; the other modes none', () => {
    const client = new InMemoryPulsar();
    const plan = (retry: 'republish' | 'nack' | 'retry-topic') =>
      planSubscriptions(
        [binding('billing'), binding('audit')],
        resolveServerOptions({ client, topics: 'orders', retry }),
        () => undefined,
      ).map(({ name, retryTopic }) => [name, retryTopic]);
    expect(plan('retry-topic')).toEqual([
      ['billing', 'orders.billing.retry'],
      ['audit', 'orders.audit.retry'],
    ]);
    expect(plan('republish')).toEqual([
      ['billing', null],
      ['audit', null],
    ]);
    expect(plan('nack')).toEqual([
      ['billing', null],
      ['audit', null],
    ]);
  });

  it('names the retry topic on the start-up line', () => {
    const line = subscriptionLine(
      'persistent://public/default/orders',
      { name: 'billing', routes: new Map([['urn:a', { name: 'A.a' }]]), retryTopic: 'orders.billing.retry' },
      'Shared',
    );
    expect(line).toBe(
      'consuming persistent://public/default/orders and its retry topic persistent://public/default/orders.billing.retry ' +
        '(subscription billing, Shared): urn:a -> A.a',
    );
  });

  it('is what the fan-out warning points to', () => {
    const client = new InMemoryPulsar();
    const planned = planSubscriptions(
      [binding('billing'), binding('audit')],
      resolveServerOptions({ client, topics: 'orders' }),
      () => undefined,
    );
    expect(fanOutWarnings(planned)).toEqual([
      "persistent://public/default/orders is consumed through 2 subscriptions (billing, audit) with retry 'republish': " +
        'a retry copy goes back to the topic, so every one of them receives it (a handler that already succeeded ' +
        "sees the message again). Use retry 'retry-topic': each subscription's retry copies then go to its own " +
        '<topic>.<subscription>.retry, which no other subscription reads',
    ]);
  });
});

const URN = 'urn:babel:fanout:kit';
const calls = new Map<string, Map<number, number>>();
function handle(subscription: string, n: number, ctx: BabelContext): void {
  const seen = calls.get(subscription) ?? new Map<number, number>();
  calls.set(subscription, seen);
  seen.set(n, (seen.get(n) ?? 0) + 1);
  if (n % 10 === 0 && ctx.getAttempts() === 0) throw new Error('fails once');
}

@Controller()
class FanOut {
  @BabelHandler(URN, { subscription: 'billing' })
  billing(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
    handle('billing', data.n, ctx);
  }

  @BabelHandler(URN, { subscription: 'audit' })
  audit(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
    handle('audit', data.n, ctx);
  }
}

describe('fan-out on the testing kit', () => {
  it.each([
    ['retry-topic', 0],
    ['republish', 10],
  ] as const)(
    "retry '%s': each subscription sees %i duplicates of 100 messages, 10%% failing once",
    async (retry, dupes) => {
      calls.clear();
      const client = new InMemoryPulsar();
      const service = await startService([FanOut], { client, topics: 'orders', retry });
      try {
        const producer = await client.createProducer({ topic: 'orders' });
        for (let n = 0; n < 100; n++) {
          const envelope = EnvelopeCodec.make(URN, { n }, { queue: 'orders' });
          await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
        }
        const expected = 110 + dupes;
        const total = (name: string) => [...(calls.get(name)?.values() ?? [])].reduce((sum, count) => sum + count, 0);
        const deadline = Date.now() + 20_000;
        while (!['billing', 'audit'].every((name) => total(name) >= expected) && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect({ billing: total('billing'), audit: total('audit') }).toEqual({ billing: expected, audit: expected });
      } finally {
        await service.close();
      }
    },
  );
});

@Controller()
class FailsTwice {
  @BabelHandler('urn:babel:fanout:twice')
  handle(@Ctx() ctx: BabelContext) {
    if (ctx.getAttempts() < 2) throw new Error('not yet');
  }
}

describe("the test harness with retry 'retry-topic'", () => {
  it('follows the copies through the retry topic to the outcome', async () => {
    const client = new InMemoryPulsar();
    const service = await startService([FailsTwice], { client, topics: 'orders', retry: 'retry-topic' });
    const harness = await BabelQueueTestHarness.attach(service.server, client);
    try {
      const outcome = await (await harness.publish('urn:babel:fanout:twice', { n: 1 })).outcome();
      expect(outcome.kind).toBe('handled');
      expect(outcome.deliveries.map(({ action }) => action)).toEqual(['retry', 'retry', 'ack']);
      expect(outcome.retries.map(({ topic }) => topic)).toEqual([
        'persistent://public/default/orders.babelqueue.retry',
        'persistent://public/default/orders.babelqueue.retry',
      ]);
    } finally {
      await harness.close();
      await service.close();
    }
  });
});
