// The transactional outbox against a real PostgreSQL and the real broker, on the client under test.
import { jest } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { randomBytes } from 'node:crypto';
import {
  AesGcmCipher,
  BabelOutbox,
  defineUrn,
  InvalidPayloadError,
  BabelProducerPool,
  OutboxRelay,
  type PulsarClientLike,
  type PulsarMessage,
} from '../../../lib/index.js';
import { BQ, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import type { ProducerSource } from '../../../lib/nest/server/server-options.js';
import { expectNothing, newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { clientOnDeadPort, deadPort, freshTables, newPool, postgresUrl, storedRows } from './support.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:orders:created';
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

let client: PulsarClientLike;
let producers: BabelProducerPool;
let pool: pg.Pool;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  client = newClient();
  producers = new BabelProducerPool(client);
  pool = newPool();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(async () => {
  await producers.close();
  await client.close();
  await pool.end();
});

async function subscribe(topic: string): Promise<PulsarConsumer> {
  const consumer = await client.subscribe({ topic, subscription: 'outbox-test' });
  cleanups.push(() => consumer.close());
  return consumer;
}

function relayOn(
  table: string,
  source: ProducerSource = producers,
  extra: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {},
) {
  return new OutboxRelay({ pool, producers: source, table, logger: quiet, ...extra });
}

/** Writes one order and its event in one pg transaction; commits or rolls back. */
async function placeOrder(
  outbox: BabelOutbox,
  orders: string,
  id: number,
  end: 'COMMIT' | 'ROLLBACK',
): Promise<string> {
  const connection = await pool.connect();
  try {
    await connection.query('BEGIN');
    await connection.query(`INSERT INTO ${orders} (id, total) VALUES ($1, $2)`, [id, id * 10]);
    const messageId = await outbox.write(connection, URN, { order_id: id, note: 'ğüş 😀', price: 19.9 });
    await connection.query(end);
    return messageId;
  } finally {
    connection.release();
  }
}

const idOf = (message: PulsarMessage): string => message.getProperties()[BQ.messageId]!;

test('commit: the relay publishes the stored body byte for byte, once, with bq-* properties from it', async () => {
  const topic = uniqueTopic('outbox-commit');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const messageId = await placeOrder(outbox, tables.orders, 1, 'COMMIT');

  const relay = relayOn(tables.outbox);
  expect(await relay.drain()).toEqual({ published: 1, failed: 0, parked: 0 });
  const [message] = await receiveN(consumer, 1);
  const [row] = await storedRows(pool, tables.outbox);
  expect(message!.getData().equals(row!.body)).toBe(true);
  const envelope = JSON.parse(row!.body.toString('utf8')) as { trace_id: string };
  expect(message!.getProperties()).toMatchObject({
    [BQ.job]: URN,
    [BQ.messageId]: messageId,
    [BQ.traceId]: envelope.trace_id,
    [BQ.schemaVersion]: '1',
    [BQ.sourceLang]: 'node',
    [BQ.attempts]: '0',
  });
  expect(row!.published_at).toBeInstanceOf(Date);
  expect(await relay.drain()).toEqual({ published: 0, failed: 0, parked: 0 });
  await expectNothing(consumer, 1000);
});

test('rollback: nothing is stored and nothing is published', async () => {
  const topic = uniqueTopic('outbox-rollback');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  await placeOrder(outbox, tables.orders, 1, 'ROLLBACK');

  expect(await storedRows(pool, tables.outbox)).toEqual([]);
  expect(await relayOn(tables.outbox).drain()).toEqual({ published: 0, failed: 0, parked: 0 });
  await expectNothing(consumer, 1000);
});

test('TypeORM: write() inside dataSource.transaction(); commit publishes, a throw publishes nothing', async () => {
  const topic = uniqueTopic('outbox-typeorm');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const dataSource = new DataSource({ type: 'postgres', url: postgresUrl() });
  await dataSource.initialize();
  cleanups.push(() => dataSource.destroy());
  const outbox = new BabelOutbox({ table: tables.outbox, topic });

  const committed = await dataSource.transaction(async (manager) => {
    await manager.query(`INSERT INTO ${tables.orders} (id, total) VALUES ($1, $2)`, [7, 70]);
    return outbox.write(manager, URN, { order_id: 7 });
  });
  await expect(
    dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO ${tables.orders} (id, total) VALUES ($1, $2)`, [8, 80]);
      await outbox.write(manager, URN, { order_id: 8 });
      throw new Error('the order is refused');
    }),
  ).rejects.toThrow('the order is refused');

  // The relay can run on the DataSource's own pg pool.
  const relay = new OutboxRelay({
    pool: (dataSource.driver as unknown as { master: pg.Pool }).master,
    producers,
    table: tables.outbox,
    logger: quiet,
  });
  expect(await relay.drain()).toEqual({ published: 1, failed: 0, parked: 0 });
  const [message] = await receiveN(consumer, 1);
  expect(idOf(message!)).toBe(committed);
  await expectNothing(consumer, 1000);
});

test('broker down: rows wait (attempts + 1, the error kept), then go once a broker answers', async () => {
  const topic = uniqueTopic('outbox-down');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const ids = [
    await placeOrder(outbox, tables.orders, 1, 'COMMIT'),
    await placeOrder(outbox, tables.orders, 2, 'COMMIT'),
  ];

  const deadClient = clientOnDeadPort(await deadPort());
  const deadProducers = new BabelProducerPool(deadClient);
  cleanups.push(async () => {
    await deadProducers.close();
    await deadClient.close();
  });
  const downRelay = relayOn(tables.outbox, deadProducers, { publishTimeoutMs: 3000 });
  expect(await downRelay.drain()).toEqual({ published: 0, failed: 2, parked: 0 });
  const waiting = await storedRows(pool, tables.outbox);
  expect(waiting.map((row) => [row.attempts, row.published_at])).toEqual([
    [1, null],
    [1, null],
  ]);
  for (const row of waiting) expect(row.last_error).toEqual(expect.any(String));
  await expectNothing(consumer, 500);

  // The same rows, once the backoff has passed, through a relay whose broker answers.
  const relay = relayOn(tables.outbox);
  let published = 0;
  await waitFor('the waiting rows to be published', async () => {
    published += (await relay.flush()).published;
    return published === 2;
  });
  const messages = await receiveN(consumer, 2);
  expect(messages.map(idOf)).toEqual(ids);
  expect((await storedRows(pool, tables.outbox)).every((row) => row.published_at !== null)).toBe(true);
});

test('relay killed mid-batch: nothing is lost; what it had published comes again with the same meta.id', async () => {
  const topic = uniqueTopic('outbox-killed');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const ids: string[] = [];
  for (let n = 1; n <= 20; n++) ids.push(await placeOrder(outbox, tables.orders, n, 'COMMIT'));

  // The relay's database session is killed after the broker stored 10 of its 20 messages: to PostgreSQL that is
  // a relay process that died between publishing and marking.
  const victimName = `bq-relay-victim-${tables.outbox}`;
  const victimPool = newPool(victimName, 1);
  cleanups.push(() => victimPool.end());
  let sent = 0;
  let killed: Promise<unknown> | null = null;
  const killing: ProducerSource = {
    async producerFor(name) {
      const producer = await producers.producerFor(name);
      return {
        ...producer,
        send: async (message) => {
          sent += 1;
          if (sent <= 10) return producer.send(message);
          killed ??= pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
            victimName,
          ]);
          await killed;
          throw new Error('the relay process died');
        },
      };
    },
  };
  const victim = new OutboxRelay({ pool: victimPool, producers: killing, table: tables.outbox, logger: quiet });
  await expect(victim.flush()).rejects.toThrow();
  expect((await storedRows(pool, tables.outbox)).filter((row) => row.published_at !== null)).toEqual([]);

  const survivor = relayOn(tables.outbox);
  expect(await survivor.drain()).toEqual({ published: 20, failed: 0, parked: 0 });
  const messages = await receiveN(consumer, 30);
  expect(new Set(messages.map(idOf))).toEqual(new Set(ids));
  expect(messages.slice(0, 10).map(idOf)).toEqual(ids.slice(0, 10));
  await expectNothing(consumer, 1000);
});

test('two relays draining one outbox at once never publish a row twice', async () => {
  const topic = uniqueTopic('outbox-two');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const rows = 300;
  const connection = await pool.connect();
  const ids: string[] = [];
  try {
    await connection.query('BEGIN');
    for (let n = 0; n < rows; n++) ids.push(await outbox.write(connection, URN, { n }));
    await connection.query('COMMIT');
  } finally {
    connection.release();
  }

  const otherPool = newPool('bq-relay-two', 2);
  cleanups.push(() => otherPool.end());
  const first = relayOn(tables.outbox, producers, { batchSize: 25 });
  const second = new OutboxRelay({ pool: otherPool, producers, table: tables.outbox, batchSize: 25, logger: quiet });
  const [a, b] = await Promise.all([first.drain(), second.drain()]);
  expect(a.published + b.published).toBe(rows);
  const messages = await receiveN(consumer, rows);
  expect(new Set(messages.map(idOf)).size).toBe(rows);
  expect(new Set(messages.map(idOf))).toEqual(new Set(ids));
  await expectNothing(consumer, 1000);
});

test('start(): the background relay publishes what is committed while it runs, and stop() ends it', async () => {
  const topic = uniqueTopic('outbox-loop');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const relay = relayOn(tables.outbox, producers, { pollIntervalMs: 50 });
  relay.start();
  cleanups.push(() => relay.stop());
  const id = await placeOrder(outbox, tables.orders, 1, 'COMMIT');
  relay.wake();
  const [message] = await receiveN(consumer, 1);
  expect(idOf(message!)).toBe(id);
  await relay.stop();
  expect(relay.started).toBe(false);
});

test('through a typed contract: invalid data writes nothing; marked fields are stored and published encrypted', async () => {
  const topic = uniqueTopic('outbox-contract');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const cipher = new AesGcmCipher(randomBytes(32));
  const outbox = new BabelOutbox({ table: tables.outbox, topic, cipher });
  const signup = defineUrn<{ user_id: number; email: string }>('urn:babel:users:signed-up', {
    schema: {
      type: 'object',
      required: ['user_id', 'email'],
      properties: { user_id: { type: 'integer', minimum: 1 }, email: { type: 'string', 'x-gdpr-sensitive': true } },
    },
  });
  const connection = await pool.connect();
  try {
    await connection.query('BEGIN');
    await expect(outbox.write(connection, signup, { user_id: 0, email: 'a@b.c' })).rejects.toThrow(InvalidPayloadError);
    await outbox.write(connection, signup, { user_id: 1, email: 'a@b.c' });
    await connection.query('COMMIT');
  } finally {
    connection.release();
  }
  const [row] = await storedRows(pool, tables.outbox);
  expect(row!.body.toString('utf8')).not.toContain('a@b.c');
  expect(await relayOn(tables.outbox).drain()).toEqual({ published: 1, failed: 0, parked: 0 });
  const [message] = await receiveN(consumer, 1);
  expect(message!.getData().equals(row!.body)).toBe(true);
  const data = (JSON.parse(message!.getData().toString('utf8')) as { data: { email: string } }).data;
  expect(cipher.decrypt(data.email).toString('utf8')).toBe('"a@b.c"');
});
