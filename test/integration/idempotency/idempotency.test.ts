// Idempotency through the real broker on the client under test, with the in-memory store and a real Redis.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { Redis } from 'ioredis';
import {
  BabelContext,
  BabelHandler,
  BabelQueueRedrive,
  EnvelopeCodec,
  Idempotent,
  InMemoryIdempotencyStore,
  RedisIdempotencyStore,
  type Envelope,
  type IdempotencyStore,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { deadLetterRecord } from '../../../lib/envelope/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, sleep, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:orders:created';
let client: PulsarClientLike;
let redis: Redis;
let service: RunningService | null = null;
beforeAll(() => {
  client = newClient();
  redis = new Redis(process.env.BQ_REDIS_URL ?? 'redis://127.0.0.1:16379', { lazyConnect: false });
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  redis.disconnect();
  await client.close();
});

async function publish(topic: string, envelope: Envelope): Promise<void> {
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
}

const stores: Array<[string, () => IdempotencyStore]> = [
  ['in-memory', () => new InMemoryIdempotencyStore()],
  ['redis', () => new RedisIdempotencyStore({ client: redis, prefix: `bq-test:${uniqueTopic('p')}:` })],
];

describe.each(stores)('with the %s store', (_name, makeStore) => {
  test('module-wide: a duplicate meta.id is acknowledged without running the handler', async () => {
    const store = makeStore();
    const runs: string[] = [];
    @Controller()
    class Orders {
      @BabelHandler(URN)
      handle(@Payload() data: { n: number }) {
        runs.push(String(data.n));
      }
    }
    const topic = uniqueTopic('idem-module');
    service = await startService([Orders], { client, topics: topic, idempotency: { store } });
    const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic });
    await publish(topic, envelope);
    await publish(topic, envelope); // a redelivered copy: same meta.id
    await publish(topic, EnvelopeCodec.make(URN, { n: 2 }, { queue: topic }));
    await waitFor('three acks', () => service!.settled.filter((e) => e.action === 'ack').length === 3);
    expect(runs).toEqual(['1', '2']);
    expect(await store.seen(envelope.meta.id)).toBe(true);
  });

  test('per handler: a failed handler leaves the id unmarked, so the retry runs; a later duplicate is skipped', async () => {
    const store = makeStore();
    let calls = 0;
    @Controller()
    class Orders {
      @BabelHandler(URN, { idempotency: { store } })
      handle(@Ctx() context: BabelContext) {
        calls++;
        if (context.getAttempts() === 0) throw new Error('first try fails');
      }
    }
    const topic = uniqueTopic('idem-handler');
    service = await startService([Orders], { client, topics: topic, maxAttempts: 3 });
    const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic });
    await publish(topic, envelope);
    await waitFor('the ack after a retry', () => service!.settled.some((e) => e.action === 'ack'));
    expect(service.settled.map((e) => e.action)).toEqual(['retry', 'ack']);
    expect(calls).toBe(2);
    await publish(topic, envelope);
    await waitFor('the duplicate acked', () => service!.settled.length === 3);
    expect(service.settled[2]!.action).toBe('ack');
    expect(calls).toBe(2);
  });

  test.each(['@Idempotent', 'the idempotency option'])(
    'a handler with its own store (%s) is governed by it alone, even when the module has a store',
    async (form) => {
      const moduleStore = makeStore();
      const own = makeStore();
      const runs: number[] = [];
      @Controller()
      class Orders {
        @BabelHandler(URN, form === '@Idempotent' ? {} : { idempotency: { store: own } })
        @(form === '@Idempotent' ? Idempotent({ store: own }) : () => undefined)
        handle(@Payload() data: { n: number }) {
          runs.push(data.n);
        }
      }
      const topic = uniqueTopic('idem-own');
      service = await startService([Orders], { client, topics: topic, idempotency: { store: moduleStore } });
      const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic });
      // The module's store already knows the id, the handler's own does not: the handler's decides, so it runs.
      await moduleStore.remember(envelope.meta.id);
      await publish(topic, envelope);
      await waitFor('the first ack', () => service!.settled.length === 1);
      expect(runs).toEqual([1]);
      expect(await own.seen(envelope.meta.id)).toBe(true);
      // Forgetting the id in the handler's store lets it run again (its TTL or forget apply), whatever the module's says.
      await own.forget(envelope.meta.id);
      await publish(topic, envelope);
      await waitFor('the second ack', () => service!.settled.length === 2);
      expect(runs).toEqual([1, 1]);
      await publish(topic, envelope);
      await waitFor('the duplicate acked', () => service!.settled.length === 3);
      expect(runs).toEqual([1, 1]);
    },
  );

  test('@Idempotent: a redriven record that was already handled is skipped', async () => {
    const store = makeStore();
    let calls = 0;
    @Controller()
    class Orders {
      @BabelHandler(URN)
      @Idempotent({ store })
      handle() {
        calls++;
      }
    }
    const topic = uniqueTopic('idem-redrive');
    const dlq = `${topic}.dlq`;
    const redrive = new BabelQueueRedrive(client);
    await redrive.run({ topic: dlq, dryRun: true, idleTimeoutMs: 200 }); // creates the DLQ subscription
    service = await startService([Orders], { client, topics: topic });
    const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic });
    await publish(topic, envelope);
    await waitFor('the first ack', () => service!.settled.length === 1);
    // The same message also sits in the DLQ (e.g. its ack was lost after a time-out); an operator redrives it.
    const record = deadLetterRecord(envelope, { reason: 'failed', error: null, attempts: 3, originalQueue: topic });
    await publish(dlq, record);
    const result = await redrive.run({ topic: dlq });
    expect(result.redriven).toBe(1);
    await waitFor('the redriven copy acked', () => service!.settled.length === 2);
    await sleep(100);
    expect(service.settled.map((e) => e.action)).toEqual(['ack', 'ack']);
    expect(calls).toBe(1);
  });
});
