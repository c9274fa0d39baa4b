// Retries on a fan-out topic through the real broker, on the client under test: with retry 'retry-topic' each
// subscription's retry copies go to its own <topic>.<subscription>.retry, so a failure in one subscription is
// never delivered again to the others; with 'republish' (for the figure) the copy reaches every subscription.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { backlog, newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(180_000);

const URN = 'urn:babel:fanout:order';
const SUBSCRIPTIONS = ['billing', 'audit', 'shipping'] as const;
type SubscriptionName = (typeof SUBSCRIPTIONS)[number];
const MESSAGES = 1000;
/** Every tenth message fails once in every subscription. */
const failsOnce = (n: number) => n % 10 === 0;

/** Handler calls per subscription and message number. */
const calls = new Map<SubscriptionName, Map<number, number>>();
function handle(subscription: SubscriptionName, data: { n: number }, ctx: BabelContext): void {
  const seen = calls.get(subscription)!;
  seen.set(data.n, (seen.get(data.n) ?? 0) + 1);
  if (failsOnce(data.n) && ctx.getAttempts() === 0) throw new Error(`${subscription} fails ${data.n} once`);
}

@Controller()
class FanOut {
  @BabelHandler(URN, { subscription: 'billing' })
  billing(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
    handle('billing', data, ctx);
  }

  @BabelHandler(URN, { subscription: 'audit' })
  audit(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
    handle('audit', data, ctx);
  }

  @BabelHandler(URN, { subscription: 'shipping' })
  shipping(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
    handle('shipping', data, ctx);
  }
}

let client: PulsarClientLike;
let service: RunningService | null = null;
beforeAll(() => {
  client = newClient();
});
beforeEach(() => {
  for (const name of SUBSCRIPTIONS) calls.set(name, new Map());
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await client.close();
});

async function publishAll(topic: string): Promise<void> {
  const producer = await client.createProducer({ topic });
  try {
    for (let start = 0; start < MESSAGES; start += 100) {
      const sends: Array<Promise<unknown>> = [];
      for (let n = start; n < Math.min(MESSAGES, start + 100); n++) {
        const envelope = EnvelopeCodec.make(URN, { n }, { queue: topic });
        sends.push(
          producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) }),
        );
      }
      await Promise.all(sends);
    }
  } finally {
    await producer.close();
  }
}

const total = (name: SubscriptionName) => [...calls.get(name)!.values()].reduce((sum, count) => sum + count, 0);
const expectedCalls = MESSAGES + MESSAGES / 10;

/** Calls beyond each message's own deliveries (1, or 2 for a message that fails once). */
function duplicates(name: SubscriptionName): number {
  let extra = 0;
  for (const [n, count] of calls.get(name)!) extra += count - (failsOnce(n) ? 2 : 1);
  return extra;
}

describe("retry 'retry-topic' on a topic with three subscriptions", () => {
  it('handles each message in each subscription exactly once more than its failures, with no duplicates', async () => {
    const topic = uniqueTopic('fanout');
    const warnings: string[] = [];
    service = await startService([FanOut], {
      client: newClient(),
      topics: topic,
      retry: 'retry-topic',
      subscriptionInitialPosition: 'Earliest',
      logger: { log: () => {}, error: () => {}, warn: (line: string) => void warnings.push(line) },
    });
    expect(
      service.server
        .describe()
        .map(({ topic: reads, subscription }) => `${reads}|${subscription}`)
        .sort(),
    ).toEqual(SUBSCRIPTIONS.flatMap((name) => [`${topic}|${name}`, `${topic}.${name}.retry|${name}`]).sort());
    // The fan-out warning is for retry by re-publish only.
    expect(warnings.filter((line) => line.includes('subscriptions'))).toEqual([]);

    await publishAll(topic);
    await waitFor(
      'every subscription settled',
      () => SUBSCRIPTIONS.every((name) => total(name) >= expectedCalls),
      120_000,
    );
    // Nothing more arrives once every subscription drained (a stray copy would be a duplicate).
    await waitFor('backlogs drained', async () => {
      for (const name of SUBSCRIPTIONS) {
        if ((await backlog(topic, name)) > 0) return false;
        if ((await backlog(`${topic}.${name}.retry`, name)) > 0) return false;
      }
      return true;
    });
    for (const name of SUBSCRIPTIONS) {
      expect({ name, handled: calls.get(name)!.size, calls: total(name), duplicates: duplicates(name) }).toEqual({
        name,
        handled: MESSAGES,
        calls: expectedCalls,
        duplicates: 0,
      });
    }
    const settled = service.settled;
    expect(settled.filter((event) => event.action === 'retry')).toHaveLength((MESSAGES / 10) * SUBSCRIPTIONS.length);
    // Settlement names the subscription's topic, whichever of its two topics the delivery came from.
    expect(new Set(settled.map((event) => event.topic))).toEqual(new Set([topic]));
    expect(settled.filter((event) => event.action === 'dead-letter')).toEqual([]);
  });
});

const EXHAUSTED = 'urn:babel:fanout:exhausted';
const exhausted: Array<{ attempts: number; topic: string; delay: string | undefined }> = [];

@Controller()
class AlwaysFails {
  @BabelHandler(EXHAUSTED, { subscription: 'billing' })
  billing(@Ctx() ctx: BabelContext) {
    exhausted.push({ attempts: ctx.getAttempts(), topic: ctx.getTopic(), delay: ctx.getProperties()['bq-delay'] });
    throw new Error('billing is down');
  }
}

describe("retry 'retry-topic': delays and dead letters", () => {
  it('delays the copy on the retry topic, and the dead-letter record names the topic, not the retry topic', async () => {
    const topic = uniqueTopic('fanout-dlq');
    const observer = newClient();
    try {
      const retries = await observer.subscribe({
        topic: `${topic}.billing.retry`,
        subscription: 'observer',
        subscriptionType: 'Shared',
      });
      const deadLetters = await observer.subscribe({
        topic: `${topic}.dlq`,
        subscription: 'observer',
        subscriptionType: 'Shared',
      });
      service = await startService([AlwaysFails], {
        client: newClient(),
        topics: topic,
        retry: 'retry-topic',
        maxAttempts: 3,
        retryPolicy: { backoff: 'fixed', initialDelayMs: 200 },
      });
      const envelope = EnvelopeCodec.make(EXHAUSTED, { n: 1 }, { queue: topic });
      const producer = await client.createProducer({ topic });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
      await producer.close();

      const copies = await receiveN(retries, 2);
      expect(copies.map((copy) => copy.getProperties()['bq-attempts'])).toEqual(['1', '2']);
      expect(copies.map((copy) => copy.getProperties()['bq-delay'])).toEqual(['200', '200']);
      const [record] = await receiveN(deadLetters, 1);
      const properties = record!.getProperties();
      expect(properties['bq-dead-letter-original-queue']).toBe(topic);
      expect(properties['bq-dead-letter-topic']).toBe(`persistent://public/default/${topic}`);
      expect(properties['bq-dead-letter-attempts']).toBe('3');
      // The handler sees the topic it subscribed, whichever of the two the delivery came from.
      expect(exhausted).toEqual([
        { attempts: 0, topic, delay: undefined },
        { attempts: 1, topic, delay: '200' },
        { attempts: 2, topic, delay: '200' },
      ]);
    } finally {
      await observer.close();
    }
  });
});

describe("retry 'republish' on the same fan-out (the figure retry-topic removes)", () => {
  it('delivers each retry copy to every subscription: each sees the others’ failures again', async () => {
    const topic = uniqueTopic('fanout-republish');
    service = await startService([FanOut], {
      client: newClient(),
      topics: topic,
      subscriptionInitialPosition: 'Earliest',
    });
    await publishAll(topic);
    // Each subscription sees its 1,000 messages, its 100 retries and the 200 copies of the others' retries.
    const republished = expectedCalls + (MESSAGES / 10) * (SUBSCRIPTIONS.length - 1);
    await waitFor(
      'every subscription settled',
      () => SUBSCRIPTIONS.every((name) => total(name) >= republished),
      120_000,
    );
    await waitFor('backlogs drained', async () => {
      for (const name of SUBSCRIPTIONS) if ((await backlog(topic, name)) > 0) return false;
      return true;
    });
    const figure = SUBSCRIPTIONS.map((name) => `${name} ${duplicates(name)}`).join(', ');
    console.log(`[fan-out] republish, ${MESSAGES} messages, 10% failing once: duplicates per subscription: ${figure}`);
    for (const name of SUBSCRIPTIONS) expect(duplicates(name)).toBe((MESSAGES / 10) * (SUBSCRIPTIONS.length - 1));
  });
});
