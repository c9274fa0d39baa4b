// A relay the broker deduplicates (docs/exactly-once.md#a-relay-the-broker-deduplicates), against a real PostgreSQL
// and the real broker, on the client under test. The topics live in a namespace of their own with deduplication on,
// so the shared broker's other topics keep its default (off).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import {
  BabelOutbox,
  BabelProducerPool,
  BabelQueueModule,
  OutboxRelay,
  type PulsarClientLike,
} from '../../../lib/index.js';
import {
  BQ,
  type PulsarConsumer,
  type PulsarMessage,
  type PulsarProducer,
  type PulsarProducerMessage,
} from '../../../lib/pulsar/index.js';
import {
  newClient,
  newWebSocketClient,
  onNative,
  receiveN,
  serviceUrl,
  sleep,
  waitFor,
  webUrl,
} from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';
import { freshTables, newPool, postgresUrl } from './support.js';
import { stampOutboxRows } from '../../../lib/outbox/relay-dedup.js';
import { toLibraryClient } from '../../../lib/pulsar/library-client.js';

jest.setTimeout(120_000);

const NAMESPACE = 'public/babelqueue-dedup';
const URN = 'urn:babel:orders:created';
const ROWS = 200;
const KILL_AFTER = 50;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CHILD = path.join(root, 'test/support/outbox/relay-child.ts');
const TS_REGISTER = path.join(root, 'scripts/lib/ts/register.mjs');
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

let pool: pg.Pool;
let observer: PulsarClientLike;
const cleanups: Array<() => Promise<unknown>> = [];

/** Creates the namespace (once for everyone) and turns its deduplication on, as an operator would. */
async function deduplicatingNamespace(): Promise<void> {
  const created = await fetch(`${webUrl()}/admin/v2/namespaces/${NAMESPACE}`, { method: 'PUT' });
  if (!created.ok && created.status !== 409) throw new Error(`creating ${NAMESPACE}: HTTP ${created.status}`);
  const enabled = await fetch(`${webUrl()}/admin/v2/namespaces/${NAMESPACE}/deduplication`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'true',
  });
  if (!enabled.ok) throw new Error(`enabling deduplication on ${NAMESPACE}: HTTP ${enabled.status}`);
  const state = await fetch(`${webUrl()}/admin/v2/namespaces/${NAMESPACE}/deduplication`);
  expect(await state.text()).toBe('true');
}

/**
 * The stored count once it stops growing: a killed relay's sends already on their way (in the WebSocket proxy's
 * producer, or in the socket's buffers) are still stored after the process is gone.
 */
async function settledOnTopic(topic: string): Promise<number> {
  let last = await storedOnTopic(topic);
  for (let unchanged = 0; unchanged < 4;) {
    await sleep(250);
    const now = await storedOnTopic(topic);
    unchanged = now === last ? unchanged + 1 : 0;
    last = now;
  }
  return last;
}

const topicIn = (prefix: string) => `persistent://${NAMESPACE}/${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** Messages the broker stored on the topic (batching is off: one entry per message). */
async function storedOnTopic(topic: string): Promise<number> {
  const local = topic.split('/').pop()!;
  const response = await fetch(`${webUrl()}/admin/v2/persistent/${NAMESPACE}/${local}/internalStats`);
  if (!response.ok) throw new Error(`internal stats of ${topic}: HTTP ${response.status}`);
  return ((await response.json()) as { numberOfEntries: number }).numberOfEntries;
}

async function subscribe(topic: string): Promise<PulsarConsumer> {
  const consumer = await observer.subscribe({ topic, subscription: 'dedup-test' });
  cleanups.push(() => consumer.close());
  return consumer;
}

async function writeRows(table: string, topic: string, rows: number): Promise<string[]> {
  const outbox = new BabelOutbox({ table, topic });
  const connection = await pool.connect();
  const ids: string[] = [];
  try {
    await connection.query('BEGIN');
    for (let n = 0; n < rows; n++) ids.push(await outbox.write(connection, URN, { n }));
    await connection.query('COMMIT');
  } finally {
    connection.release();
  }
  return ids;
}

/** Runs the relay in a child process that SIGKILLs itself after KILL_AFTER acknowledged sends of its one batch. */
function killedRelay(table: string, producerName: string | undefined): Promise<string | number | null> {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, CHILD], {
    cwd: root,
    env: {
      ...process.env,
      BQ_PG_URL: postgresUrl(),
      RELAY_TABLE: table,
      RELAY_BATCH: String(ROWS),
      RELAY_KILL_AFTER: String(KILL_AFTER),
      ...(producerName !== undefined && { RELAY_PRODUCER_NAME: producerName }),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const errors: string[] = [];
  child.stderr.on('data', (chunk) => errors.push(String(chunk)));
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      if (signal !== 'SIGKILL') process.stderr.write(errors.join(''));
      resolve(signal ?? code);
    }),
  );
}

/** Every message on the topic, by meta.id: how many distinct ids, how many copies beyond the first. */
async function copiesOnTopic(topic: string, consumer: PulsarConsumer): Promise<{ ids: Set<string>; extra: number }> {
  const stored = await storedOnTopic(topic);
  const messages = await receiveN(consumer, stored, 30_000);
  const ids = new Set(messages.map((message: PulsarMessage) => message.getProperties()[BQ.messageId]!));
  return { ids, extra: messages.length - ids.size };
}

async function pendingRows(table: string): Promise<number> {
  const result = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE published_at IS NULL`);
  return Number(result.rows[0]!.n);
}

/** The client under test with every producer's send going through `send` (a fault put in the relay's way). */
function withSend(
  client: Parameters<typeof toLibraryClient>[0],
  send: (message: PulsarProducerMessage, next: PulsarProducer['send']) => ReturnType<PulsarProducer['send']>,
): PulsarClientLike {
  const library = toLibraryClient(client);
  return {
    async createProducer(config) {
      const producer = await library.createProducer(config);
      return {
        send: (message) => send(message, (given) => producer.send(given)),
        flush: () => producer.flush(),
        close: () => producer.close(),
        getTopic: () => producer.getTopic(),
      };
    },
    subscribe: (config) => library.subscribe(config),
    close: async () => null,
  };
}

beforeAll(async () => {
  pool = newPool('bq-dedup-test', 4);
  observer = newWebSocketClient();
  await deduplicatingNamespace();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(async () => {
  await observer.close();
  await pool.end();
});

test(`relay SIGKILLed mid-batch with deduplication: the restarted relay (same producer name) sends every row; ${
  onNative() ? 'the broker drops each copy it had stored' : 'the WebSocket API cannot carry the ids, copies remain'
}`, async () => {
  const topic = topicIn('relay-killed');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, ROWS);
  const producerName = `relay-${tables.outbox}`;

  expect(await killedRelay(tables.outbox, producerName)).toBe('SIGKILL');
  expect(await pendingRows(tables.outbox)).toBe(ROWS); // it died before marking anything
  const storedBeforeRestart = await settledOnTopic(topic);
  expect(storedBeforeRestart).toBeGreaterThanOrEqual(KILL_AFTER);

  const client = newClient();
  cleanups.push(() => client.close());
  const relay = new OutboxRelay({ pool, table: tables.outbox, logger: quiet, deduplication: { producerName, client } });
  cleanups.push(() => relay.stop());
  expect(await relay.drain()).toEqual({ published: ROWS, failed: 0, parked: 0 });
  expect(await pendingRows(tables.outbox)).toBe(0);

  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  console.log(
    `relay SIGKILLed after ${KILL_AFTER} acknowledged sends of ${ROWS} (${storedBeforeRestart} stored before the ` +
      `restart), deduplication on, ${onNative() ? 'native' : 'WebSocket'} client: ${extra} duplicate(s) on the topic`,
  );
  if (onNative()) expect(extra).toBe(0);
  else expect(extra).toBe(storedBeforeRestart); // every copy stored before the crash is stored again
});

test('relay SIGKILLed mid-batch without deduplication: every row it had sent comes again (the figure to compare)', async () => {
  const topic = topicIn('relay-killed-plain');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, ROWS);

  expect(await killedRelay(tables.outbox, undefined)).toBe('SIGKILL');
  const storedBeforeRestart = await settledOnTopic(topic);

  const client = newClient();
  const producers = new BabelProducerPool(client);
  cleanups.push(() => client.close());
  cleanups.push(() => producers.close());
  const relay = new OutboxRelay({ pool, producers, table: tables.outbox, logger: quiet });
  expect(await relay.drain()).toEqual({ published: ROWS, failed: 0, parked: 0 });

  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  console.log(
    `relay SIGKILLed after ${KILL_AFTER} acknowledged sends of ${ROWS}, no deduplication, ` +
      `${onNative() ? 'native' : 'WebSocket'} client: ${extra} duplicate(s) on the topic`,
  );
  expect(extra).toBe(storedBeforeRestart);
});

test('a row committed after rows written later were sent is not dropped: ids are stamped at send time, not at insert', async () => {
  const topic = topicIn('relay-late');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  // The late transaction takes its seq first and commits last.
  const late = await pool.connect();
  await late.query('BEGIN');
  const lateId = await outbox.write(late, URN, { n: 'late' });
  const early = await writeRows(tables.outbox, topic, 5);

  const client = newClient();
  cleanups.push(() => client.close());
  const producerName = `relay-${tables.outbox}`;
  const relay = new OutboxRelay({ pool, table: tables.outbox, logger: quiet, deduplication: { producerName, client } });
  cleanups.push(() => relay.stop());
  expect((await relay.drain()).published).toBe(5);
  await late.query('COMMIT');
  late.release();
  expect((await relay.drain()).published).toBe(1);

  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set([...early, lateId]));
  expect(extra).toBe(0);
});

test('a row whose send failed is stamped anew: sent after rows with higher ids went out, it is stored, not dropped', async () => {
  const topic = topicIn('relay-failed-row');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 5);
  const victim = ids[1]!;
  const client = newClient();
  cleanups.push(() => client.close());
  // The second row's first send fails before it leaves (as a lost connection would); the rows after it go out.
  let failed = false;
  const failingOnce = withSend(client, async (message, send) => {
    if (!failed && message.properties?.[BQ.messageId] === victim) {
      failed = true;
      throw new Error('connection lost');
    }
    return send(message);
  });
  const producerName = `relay-${tables.outbox}`;
  const relay = new OutboxRelay({
    pool,
    table: tables.outbox,
    logger: quiet,
    deduplication: { producerName, client: failingOnce },
  });
  cleanups.push(() => relay.stop());
  expect(await relay.flush()).toEqual({ published: 4, failed: 1, parked: 0 });
  await pool.query(`UPDATE ${tables.outbox} SET next_attempt_at = now() WHERE published_at IS NULL`); // due now
  expect(await relay.drain()).toEqual({ published: 1, failed: 0, parked: 0 });
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  expect(extra).toBe(0);
});

test('sends stored but reported failed, with nothing after them sent, come again with their ids: the broker drops them', async () => {
  const topic = topicIn('relay-lost-acks');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 5);
  const client = newClient();
  cleanups.push(() => client.close());
  // The last three sends reach the broker, then fail (as when the connection drops before their receipts arrive).
  let lost = 0;
  const receiptsLost = withSend(client, async (message, send) => {
    const receipt = await send(message);
    if (lost < 3 && ids.indexOf(message.properties?.[BQ.messageId] ?? '') >= 2) {
      lost += 1;
      throw new Error('connection lost');
    }
    return receipt;
  });
  const producerName = `relay-${tables.outbox}`;
  const relay = new OutboxRelay({
    pool,
    table: tables.outbox,
    logger: quiet,
    deduplication: { producerName, client: receiptsLost },
  });
  cleanups.push(() => relay.stop());
  expect(await relay.flush()).toEqual({ published: 2, failed: 3, parked: 0 });
  await pool.query(`UPDATE ${tables.outbox} SET next_attempt_at = now() WHERE published_at IS NULL`); // due now
  expect(await relay.drain()).toEqual({ published: 3, failed: 0, parked: 0 });
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  // The WebSocket API carries no sequence id (see the docs), so there the three copies are stored again.
  expect(extra).toBe(onNative() ? 0 : 3);
});

test('a stamped row waiting out its backoff holds back the rows stamped after it', async () => {
  const topic = topicIn('relay-backoff');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 3);
  const producerName = `relay-${tables.outbox}`;
  await stampOutboxRows(pool, tables.outbox, producerName, 3, 60_000);
  // The first row failed with nothing after it sent: it keeps its id and waits out its backoff.
  await pool.query(
    `UPDATE ${tables.outbox} SET attempts = 1, next_attempt_at = now() + interval '1 hour'
      WHERE seq = (SELECT min(seq) FROM ${tables.outbox})`,
  );
  const client = newClient();
  cleanups.push(() => client.close());
  const relay = new OutboxRelay({ pool, table: tables.outbox, logger: quiet, deduplication: { producerName, client } });
  cleanups.push(() => relay.stop());
  expect((await relay.drain()).published).toBe(0);
  await pool.query(`UPDATE ${tables.outbox} SET next_attempt_at = now() WHERE published_at IS NULL`);
  expect((await relay.drain()).published).toBe(3);
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  expect(extra).toBe(0);
});

test('two deduplicating relays of different names on one outbox: every row once', async () => {
  const topic = topicIn('relay-two');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 300);
  const client = newClient();
  cleanups.push(() => client.close());
  const otherPool = newPool('bq-dedup-other', 2);
  cleanups.push(() => otherPool.end());
  const relays = [
    new OutboxRelay({
      pool,
      table: tables.outbox,
      batchSize: 25,
      logger: quiet,
      deduplication: { producerName: `a-${tables.outbox}`, client },
    }),
    new OutboxRelay({
      pool: otherPool,
      table: tables.outbox,
      batchSize: 25,
      logger: quiet,
      deduplication: { producerName: `b-${tables.outbox}`, client },
    }),
  ];
  for (const relay of relays) cleanups.push(() => relay.stop());
  const [a, b] = await Promise.all(relays.map((relay) => relay.drain()));
  expect(a!.published + b!.published).toBe(300);
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  expect(extra).toBe(0);
});

test("a stamped row another relay's statement holds for a moment is waited for, not skipped (ids go out in order)", async () => {
  const topic = topicIn('relay-held');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 5);
  const producerName = `relay-${tables.outbox}`;
  await stampOutboxRows(pool, tables.outbox, producerName, 5, 60_000);
  // Another relay's stamping statement locks the rows it scans, this relay's included, until it ends.
  const other = await pool.connect();
  await other.query('BEGIN');
  await other.query(`SELECT seq FROM ${tables.outbox} ORDER BY seq LIMIT 1 FOR UPDATE`);
  const client = newClient();
  cleanups.push(() => client.close());
  const relay = new OutboxRelay({ pool, table: tables.outbox, logger: quiet, deduplication: { producerName, client } });
  cleanups.push(() => relay.stop());
  const pass = relay.flush();
  await sleep(300);
  await other.query('COMMIT');
  other.release();
  // Skipping the held row would send ids 2-5 first; the broker would then drop the first row's lower id.
  expect(await pass).toEqual({ published: 5, failed: 0, parked: 0 });
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  expect(extra).toBe(0);
});

test('rows another relay stamped wait for it, and are taken over once they waited takeOverAfterMs', async () => {
  const topic = topicIn('relay-takeover');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 10);
  // A relay of another name stamped them and never came back.
  await stampOutboxRows(pool, tables.outbox, 'gone-relay', 10, 60_000);
  const client = newClient();
  cleanups.push(() => client.close());
  const producerName = `relay-${tables.outbox}`;
  const patient = new OutboxRelay({
    pool,
    table: tables.outbox,
    logger: quiet,
    deduplication: { producerName, client },
  });
  cleanups.push(() => patient.stop());
  expect((await patient.drain()).published).toBe(0);
  await sleep(50);
  const taker = new OutboxRelay({
    pool,
    table: tables.outbox,
    logger: quiet,
    deduplication: { producerName, client, takeOverAfterMs: 10 },
  });
  cleanups.push(() => taker.stop());
  expect((await taker.drain()).published).toBe(10);
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  expect(extra).toBe(0);
});

test('a running relay renews its stamps: its rows are not taken over, however long its sends take', async () => {
  const topic = topicIn('relay-renewed');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const ids = await writeRows(tables.outbox, topic, 10);
  // A live relay stamped them long ago (its sends held up by a broker outage, say) and passes again now.
  await stampOutboxRows(pool, tables.outbox, 'live-relay', 10, 60_000);
  const backdate = () =>
    pool.query(
      `UPDATE ${tables.outbox} SET dedup_stamped_at = now() - interval '10 minutes' WHERE published_at IS NULL`,
    );
  await backdate();
  await stampOutboxRows(pool, tables.outbox, 'live-relay', 10, 60_000);
  const client = newClient();
  cleanups.push(() => client.close());
  const taker = new OutboxRelay({
    pool,
    table: tables.outbox,
    logger: quiet,
    deduplication: { producerName: `relay-${tables.outbox}`, client, takeOverAfterMs: 60_000 },
  });
  cleanups.push(() => taker.stop());
  expect((await taker.drain()).published).toBe(0);
  // Once the live relay stops passing, its rows wait out takeOverAfterMs and are taken over.
  await backdate();
  expect((await taker.drain()).published).toBe(10);
  const { ids: seen, extra } = await copiesOnTopic(topic, consumer);
  expect(seen).toEqual(new Set(ids));
  expect(extra).toBe(0);
});

test('a table without the deduplication columns: the pass fails with what to run', async () => {
  const tables = await freshTables(pool);
  await pool.query(`ALTER TABLE ${tables.outbox} DROP COLUMN dedup_producer`);
  const client = newClient();
  cleanups.push(() => client.close());
  const relay = new OutboxRelay({
    pool,
    table: tables.outbox,
    logger: quiet,
    deduplication: { producerName: `relay-${tables.outbox}`, client },
  });
  cleanups.push(() => relay.stop());
  await expect(relay.flush()).rejects.toThrow(/has no deduplication columns .*outboxMigrationSql\(\)/);
});

test("the module: outbox.deduplication names the relay's producers and relays through them", async () => {
  const topic = topicIn('relay-module');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const producerName = `relay-${tables.outbox}`;
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        logger: quietLogger,
        outbox: { pool, table: tables.outbox, relay: { pollIntervalMs: 50 }, deduplication: { producerName } },
      }),
    ],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(quietLogger)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  cleanups.push(() => app.close());

  const ids = await writeRows(tables.outbox, topic, 3);
  const received = await receiveN(consumer, 3);
  expect(new Set(received.map((message) => message.getProperties()[BQ.messageId]))).toEqual(new Set(ids));
  const local = topic.split('/').pop()!;
  const publishers = await waitFor('the relay producer in the topic stats', async () => {
    const stats = (await (await fetch(`${webUrl()}/admin/v2/persistent/${NAMESPACE}/${local}/stats`)).json()) as {
      publishers: Array<{ producerName: string }>;
    };
    return stats.publishers.length > 0 ? stats.publishers : null;
  });
  expect(publishers.map((publisher) => publisher.producerName)).toEqual([producerName]);
});

test('the module refuses a deduplication without a producer name, with the option named', async () => {
  const imports = [
    BabelQueueModule.forRoot({
      serviceUrl: serviceUrl(),
      logger: quietLogger,
      outbox: { pool, deduplication: { producerName: ' ' } },
    }),
  ];
  await expect(Test.createTestingModule({ imports }).setLogger(quietLogger).compile()).rejects.toThrow(
    /outbox\.deduplication\.producerName must be a non-empty string/,
  );
});
