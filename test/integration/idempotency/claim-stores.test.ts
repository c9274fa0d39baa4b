// The claim stores on a real PostgreSQL and Redis: the claim sequences, two concurrent callers per id, and two
// instances of a server on one Shared subscription given the same message at once.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { BabelHandler, EnvelopeCodec, Idempotent, type Envelope, type PulsarClientLike } from '../../../lib/index.js';
import {
  PostgresClaimStore,
  RedisClaimStore,
  claimStoreMigrationSql,
  runClaimed,
  type ClaimStore,
} from '../../../lib/idempotency/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, sleep, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';
import { newPool } from '../outbox/support.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:orders:created';
let client: PulsarClientLike;
let pools: pg.Pool[];
let redises: Redis[];
let services: RunningService[] = [];
beforeAll(() => {
  client = newClient();
  // Two of each: two "instances" that share nothing but the database.
  pools = [newPool('bq-claims-a', 8), newPool('bq-claims-b', 8)];
  const url = process.env.BQ_REDIS_URL ?? 'redis://127.0.0.1:16379';
  redises = [new Redis(url), new Redis(url)];
});
afterEach(async () => {
  await Promise.all(services.map((service) => service.close()));
  services = [];
});
afterAll(async () => {
  for (const redis of redises) redis.disconnect();
  await Promise.all(pools.map((pool) => pool.end()));
  await client.close();
});

/** One store per instance, on the same table or key prefix. */
type StorePair = (leaseMs?: number) => Promise<[ClaimStore, ClaimStore]>;
const postgresPair: StorePair = async (leaseMs) => {
  const table = `claims_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await pools[0]!.query(claimStoreMigrationSql(table));
  return [
    new PostgresClaimStore({ pool: pools[0]!, table, ...(leaseMs && { leaseMs }) }),
    new PostgresClaimStore({ pool: pools[1]!, table, ...(leaseMs && { leaseMs }) }),
  ];
};
const redisPair: StorePair = async (leaseMs) => {
  const prefix = `bq-test:${randomUUID()}:`;
  return [
    new RedisClaimStore({ client: redises[0]!, prefix, ...(leaseMs && { leaseMs }) }),
    new RedisClaimStore({ client: redises[1]!, prefix, ...(leaseMs && { leaseMs }) }),
  ];
};

async function publish(topic: string, envelope: Envelope): Promise<void> {
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
}

describe.each([
  ['PostgreSQL', postgresPair],
  ['Redis', redisPair],
])('%s claim store', (_name, pair) => {
  test('claim → held for others; commit → done; release → claimable; lease expiry → claimable', async () => {
    const [a, b] = await pair(300);
    expect(await a.claim('m1', 'ta')).toBe('claimed');
    expect(await b.claim('m1', 'tb')).toBe('held');
    await a.commit('m1', 'ta');
    expect(await b.claim('m1', 'tb')).toBe('done');

    expect(await a.claim('m2', 'ta')).toBe('claimed');
    await b.release('m2', 'tb'); // not its claim: a no-op
    expect(await b.claim('m2', 'tb')).toBe('held');
    await a.release('m2', 'ta');
    expect(await b.claim('m2', 'tb')).toBe('claimed');

    expect(await a.claim('m3', 'ta')).toBe('claimed');
    await waitFor('the lease to end', async () => (await b.claim('m3', 'tb')) === 'claimed');
    await a.release('m3', 'ta'); // the late holder cannot free the new claim
    expect(await a.claim('m3', 'tc')).toBe('held');
  });

  test('the same id claimed by 2 concurrent callers, 1,000 times: the body ran 1,000 times', async () => {
    const [a, b] = await pair();
    const ran = new Map<string, number>();
    const body = (id: string) => async () => {
      ran.set(id, (ran.get(id) ?? 0) + 1);
      await new Promise((resolve) => setImmediate(resolve)); // the other caller gets its turn while this one holds
    };
    const outcomes: string[] = [];
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    for (let at = 0; at < ids.length; at += 25) {
      const group = ids.slice(at, at + 25);
      const settled = await Promise.all(group.flatMap((id) => [a, b].map((store) => runClaimed(store, id, body(id)))));
      outcomes.push(...settled);
    }
    expect([...ran.values()].reduce((sum, runs) => sum + runs, 0)).toBe(1000);
    expect(ran.size).toBe(1000);
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(1000);
  });

  test.each(['module-wide', '@Idempotent'])(
    'two instances on one Shared subscription given one id at once (%s): the handler runs once',
    async (form) => {
      const [a, b] = await pair();
      const topic = uniqueTopic('claim-instances');
      let runs = 0;
      let running = 0;
      let overlapped = false;
      const start = async (store: ClaimStore) => {
        @Controller()
        class Orders {
          @BabelHandler(URN)
          @(form === '@Idempotent' ? Idempotent({ store }) : () => undefined)
          async handle(@Payload() _data: { n: number }) {
            runs++;
            running++;
            overlapped ||= running > 1;
            await sleep(300); // long enough for the other copy to arrive while this one runs
            running--;
          }
        }
        return startService([Orders], {
          client,
          topics: topic,
          subscriptionType: 'Shared',
          ...(form === 'module-wide' && { idempotency: { store } }),
        });
      };
      services = [await start(a), await start(b)];
      const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic });
      await Promise.all([publish(topic, envelope), publish(topic, envelope)]);
      await waitFor('both copies acknowledged', () => services.flatMap((s) => s.settled).length === 2);
      expect(services.flatMap((s) => s.settled.map((event) => event.action))).toEqual(['ack', 'ack']);
      expect(runs).toBe(1);
      expect(overlapped).toBe(false);
    },
  );
});
