// The inbox on a real PostgreSQL and broker, in apps built with BabelQueueModule.forRoot as the docs show: each
// handler inserts a business row and ctx.publish()es one follow-up in the inbox's transaction.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Module, type INestMicroservice } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  BabelContext,
  BabelHandler,
  BabelOutbox,
  BabelPulsarServer,
  BabelQueueModule,
  EnvelopeCodec,
  outboxMigrationSql,
  type Envelope,
  type PulsarClientLike,
  type SettledEvent,
} from '../../../lib/index.js';
import { PostgresInbox, inboxMigrationSql, type InboxTransaction } from '../../../lib/inbox/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, serviceUrl, sleep, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';
import { newPool } from '../outbox/support.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:orders:placed';
const FOLLOW_UP = 'urn:babel:invoices:requested';
let client: PulsarClientLike;
let pool: pg.Pool;
let apps: INestMicroservice[] = [];
beforeAll(() => {
  client = newClient();
  pool = newPool('bq-inbox-test', 12);
});
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});
afterAll(async () => {
  await pool.end();
  await client.close();
});

interface Tables {
  inbox: string;
  outbox: string;
  orders: string;
}

async function freshTables(): Promise<Tables> {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
  const tables = { inbox: `inbox_${suffix}`, outbox: `outbox_${suffix}`, orders: `orders_${suffix}` };
  await pool.query(inboxMigrationSql(tables.inbox));
  await pool.query(outboxMigrationSql(tables.outbox));
  // No unique constraint: a handler that ran twice for one message would leave two rows.
  await pool.query(`CREATE TABLE ${tables.orders} (message_id text NOT NULL, n integer NOT NULL)`);
  return tables;
}

interface Behaviour {
  /** Throws after the insert and the follow-up on the first attempt of these n. */
  failOnce?: (n: number) => boolean;
  /** How long the handler holds its transaction after its writes, ms. */
  holdMs?: number;
  /** Told each time the handler body starts, with the message's id. */
  onRun?: (messageId: string) => void;
}

async function startApp(topic: string, followTopic: string, tables: Tables, behaviour: Behaviour = {}) {
  @Controller()
  class Orders {
    @BabelHandler(URN)
    async placed(@Payload('n') n: number, @Ctx() ctx: BabelContext) {
      behaviour.onRun?.(ctx.getEnvelope().meta.id);
      const tx = ctx.getTransaction<pg.PoolClient>();
      await tx.query(`INSERT INTO ${tables.orders} (message_id, n) VALUES ($1, $2)`, [ctx.getEnvelope().meta.id, n]);
      await ctx.publish(FOLLOW_UP, { n });
      if (behaviour.holdMs) await sleep(behaviour.holdMs);
      if (ctx.getAttempts() === 0 && behaviour.failOnce?.(n)) throw new Error(`order ${n} fails once`);
    }
  }
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        logger: quietLogger,
        consumer: { maxAttempts: 3, concurrency: 4 },
        inbox: {
          store: new PostgresInbox({
            pool,
            table: tables.inbox,
            outbox: new BabelOutbox({ table: tables.outbox, topic: followTopic }),
          }),
          every: true,
        },
        outbox: { pool, table: tables.outbox, relay: { pollIntervalMs: 50 } },
      }),
    ],
    controllers: [Orders],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const server = moduleRef.get(BabelPulsarServer);
  const settled: SettledEvent[] = [];
  server.on('settled', (event) => settled.push(event));
  const app = moduleRef.createNestMicroservice({ strategy: server, logger: false });
  await app.listen();
  apps.push(app);
  return settled;
}

async function publishAll(topic: string, envelopes: Envelope[]): Promise<void> {
  const producer = await client.createProducer({ topic });
  await Promise.all(
    envelopes.map((envelope) =>
      producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) }),
    ),
  );
  await producer.close();
}

async function businessRows(tables: Tables): Promise<{ rows: number; distinct: number }> {
  const { rows } = await pool.query<{ rows: string; distinct: string }>(
    `SELECT count(*) AS rows, count(DISTINCT message_id) AS distinct FROM ${tables.orders}`,
  );
  return { rows: Number(rows[0]!.rows), distinct: Number(rows[0]!.distinct) };
}

/** The follow-ups the relay put on the topic, by the `n` they carry. */
async function followUps(followTopic: string, count: number): Promise<number[]> {
  const consumer = await client.subscribe({
    topic: followTopic,
    subscription: 'check',
    subscriptionType: 'Shared',
    subscriptionInitialPosition: 'Earliest',
  });
  try {
    const messages = await receiveN(consumer, count);
    await sleep(300); // and nothing more arrives
    for (;;) {
      try {
        messages.push(await consumer.receive(200));
      } catch {
        break;
      }
    }
    return messages
      .map((message) => (JSON.parse(message.getData().toString('utf8')) as { data: { n: number } }).data.n)
      .sort((a, b) => a - b);
  } finally {
    await consumer.close();
  }
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

test('redelivered copies of handled ids do not run again; one business row and one follow-up per message', async () => {
  const tables = await freshTables();
  const topic = uniqueTopic('inbox-redelivered');
  const followTopic = uniqueTopic('inbox-follow');
  const settled = await startApp(topic, followTopic, tables);
  const envelopes = range(30).map((n) => EnvelopeCodec.make(URN, { n }, { queue: topic }));
  await publishAll(topic, envelopes);
  await waitFor('30 acks', () => settled.filter((e) => e.action === 'ack').length === 30);
  await publishAll(topic, envelopes); // each one again: copies of ids already handled
  await waitFor('60 acks', () => settled.filter((e) => e.action === 'ack').length === 60, 30_000);
  expect(settled.filter((e) => e.duplicate === true)).toHaveLength(30);
  expect(await businessRows(tables)).toEqual({ rows: 30, distinct: 30 });
  expect((await pool.query(`SELECT count(*)::int AS n FROM ${tables.inbox}`)).rows[0].n).toBe(30);
  expect(await followUps(followTopic, 30)).toEqual(range(30));
});

test('a handler that fails rolls back its row and its follow-up; the retry commits them once', async () => {
  const tables = await freshTables();
  const topic = uniqueTopic('inbox-failing');
  const followTopic = uniqueTopic('inbox-follow');
  const settled = await startApp(topic, followTopic, tables, { failOnce: (n) => n % 3 === 0 });
  await publishAll(
    topic,
    range(30).map((n) => EnvelopeCodec.make(URN, { n }, { queue: topic })),
  );
  await waitFor('30 acks', () => settled.filter((e) => e.action === 'ack').length === 30, 30_000);
  expect(settled.filter((e) => e.action === 'retry')).toHaveLength(10);
  expect(await businessRows(tables)).toEqual({ rows: 30, distinct: 30 });
  expect(await followUps(followTopic, 30)).toEqual(range(30));
});

test('two instances given the same id at once: one runs, the other waits for its row lock and skips', async () => {
  const tables = await freshTables();
  const topic = uniqueTopic('inbox-instances');
  const followTopic = uniqueTopic('inbox-follow');
  const first = await startApp(topic, followTopic, tables, { holdMs: 100 });
  const second = await startApp(topic, followTopic, tables, { holdMs: 100 });
  const envelopes = range(20).map((n) => EnvelopeCodec.make(URN, { n }, { queue: topic }));
  await Promise.all([publishAll(topic, envelopes), publishAll(topic, envelopes)]);
  const acks = () => [...first, ...second].filter((e) => e.action === 'ack');
  await waitFor('40 acks', () => acks().length === 40, 30_000);
  expect(acks().filter((e) => e.duplicate === true)).toHaveLength(20);
  expect(await businessRows(tables)).toEqual({ rows: 20, distinct: 20 });
  expect(await followUps(followTopic, 20)).toEqual(range(20));
});

test('two instances given each of 1,000 ids twice at once: the handler body ran 1,000 times, not 2,000', async () => {
  const tables = await freshTables();
  const topic = uniqueTopic('inbox-instances-1000');
  const followTopic = uniqueTopic('inbox-follow');
  const runs = new Map<string, number>();
  const onRun = (id: string) => runs.set(id, (runs.get(id) ?? 0) + 1);
  const first = await startApp(topic, followTopic, tables, { onRun });
  const second = await startApp(topic, followTopic, tables, { onRun });
  const envelopes = range(1000).map((n) => EnvelopeCodec.make(URN, { n }, { queue: topic }));
  // Each id's two copies back to back: the Shared subscription hands them to either instance, or both to one.
  await publishAll(
    topic,
    envelopes.flatMap((envelope) => [envelope, envelope]),
  );
  const acks = () => [...first, ...second].filter((e) => e.action === 'ack');
  await waitFor('2,000 acks', () => acks().length === 2000, 90_000);
  expect([...runs.values()].reduce((sum, count) => sum + count, 0)).toBe(1000);
  expect(runs.size).toBe(1000);
  expect(acks().filter((e) => e.duplicate === true)).toHaveLength(1000);
  expect(await businessRows(tables)).toEqual({ rows: 1000, distinct: 1000 });
  expect(await followUps(followTopic, 1000)).toEqual(range(1000));
  const duplicates = (events: SettledEvent[]) => events.filter((e) => e.duplicate === true).length;
  console.log(
    `1,000 ids twice each, two instances: the body ran ${runs.size} times; duplicates acknowledged without running: ` +
      `${duplicates(first)} on the first instance, ${duplicates(second)} on the second`,
  );
});

test('the same id run through PostgresInbox by 2 concurrent callers, 1,000 times: the body ran 1,000 times', async () => {
  const tables = await freshTables();
  const inbox = new PostgresInbox({ pool, table: tables.inbox });
  let runs = 0;
  let duplicates = 0;
  const ids = range(1000).map(() => randomUUID());
  for (let at = 0; at < ids.length; at += 5) {
    const outcomes = await Promise.all(
      ids.slice(at, at + 5).flatMap((id) =>
        [1, 2].map(() =>
          inbox.run('billing', id, async (tx) => {
            runs++;
            await tx.client.query(`INSERT INTO ${tables.orders} (message_id, n) VALUES ($1, 0)`, [id]);
          }),
        ),
      ),
    );
    duplicates += outcomes.filter((outcome) => outcome === 'duplicate').length;
  }
  expect(runs).toBe(1000);
  expect(duplicates).toBe(1000);
  expect(await businessRows(tables)).toEqual({ rows: 1000, distinct: 1000 });
  expect(await inbox.prune(0, 400)).toBe(400); // pruning, in small batches
  expect(await inbox.prune(0, 400)).toBe(400);
  expect(await inbox.prune(0, 400)).toBe(200);
});

test('ids and subscriptions with quotes, backslashes and SQL in them are recorded as they are (BEGIN and the row go as one query)', async () => {
  const tables = await freshTables();
  const inbox = new PostgresInbox({ pool, table: tables.inbox });
  const awkward = [`it's`, 'back\\slash\\', `x'); DROP TABLE ${tables.orders}; --`, 'ğüş 😀', `E'\\'`];
  const subscription = `sub'scription\\`;
  for (const id of awkward) {
    expect(await inbox.run(subscription, id, async (tx) => void (await tx.client.query('SELECT 1')))).toBe('ran');
    expect(await inbox.run(subscription, id, async () => undefined)).toBe('duplicate');
  }
  const kept = await pool.query<{ subscription: string; message_id: string }>(
    `SELECT subscription, message_id FROM ${tables.inbox}`,
  );
  expect(kept.rows.map((row) => row.message_id).sort()).toEqual([...awkward].sort());
  expect(new Set(kept.rows.map((row) => row.subscription))).toEqual(new Set([subscription]));
  expect(await businessRows(tables)).toEqual({ rows: 0, distinct: 0 }); // the table is still there
});

test('a message without meta.id runs in a transaction every time, without an inbox row; a throw rolls it back', async () => {
  const tables = await freshTables();
  const inbox = new PostgresInbox({ pool, table: tables.inbox });
  const insert = async (tx: InboxTransaction): Promise<void> => {
    await tx.client.query(`INSERT INTO ${tables.orders} (message_id, n) VALUES ('none', 1)`, []);
  };
  expect(await inbox.run('billing', undefined, insert)).toBe('ran');
  expect(await inbox.run('billing', undefined, insert)).toBe('ran');
  await expect(
    inbox.run('billing', undefined, async (tx) => {
      await insert(tx);
      throw new Error('rolled back');
    }),
  ).rejects.toThrow('rolled back');
  expect(await businessRows(tables)).toEqual({ rows: 2, distinct: 1 });
  expect((await pool.query(`SELECT count(*)::int AS n FROM ${tables.inbox}`)).rows[0].n).toBe(0);
});
