// Rows the relay cannot publish because of the row itself are parked after their attempts, never looped on, and
// never block the others; the table, the service methods and the CLI list and re-queue them. Real PostgreSQL,
// real broker, on the client under test.
import { jest } from '@jest/globals';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BabelOutbox,
  BabelProducerPool,
  BabelPulsarClient,
  EnvelopeCodec,
  OutboxRelay,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { BQ, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { outboxParkingMigrationSql } from '../../../lib/outbox/index.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { expectNothing, newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import {
  freshTables,
  insertRawRow,
  newPool,
  parkingRows,
  postgresUrl,
  recordingLogger,
  storedRows,
} from './support.js';

jest.setTimeout(90_000);

const URN = 'urn:babel:orders:created';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}
const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });

let client: PulsarClientLike;
let producers: BabelProducerPool;
let pool: pg.Pool;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  metrics.setGlobalMeterProvider(meterProvider);
  client = newClient();
  producers = new BabelProducerPool(client);
  pool = newPool('bq-outbox-parking');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(async () => {
  await producers.close();
  await client.close();
  await pool.end();
  await meterProvider.shutdown();
  metrics.disable();
});

async function subscribe(topic: string): Promise<PulsarConsumer> {
  const consumer = await client.subscribe({ topic, subscription: 'outbox-test' });
  cleanups.push(() => consumer.close());
  return consumer;
}

async function writeOne(outbox: BabelOutbox, data: object = { order_id: 1 }, topic?: string): Promise<string> {
  const connection = await pool.connect();
  try {
    await connection.query('BEGIN');
    const id = await outbox.write(connection, URN, data, topic === undefined ? {} : { topic });
    await connection.query('COMMIT');
    return id;
  } finally {
    connection.release();
  }
}

/** Passes until `check` holds, each pass once its rows' backoff has passed. */
async function passUntil(relay: OutboxRelay, what: string, check: () => Promise<boolean>): Promise<void> {
  await waitFor(what, async () => {
    await relay.flush();
    return check();
  });
}

async function counter(name: string): Promise<number> {
  const collected = await reader.collect();
  const metric = collected.resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((candidate) => candidate.descriptor.name === name);
  return (metric?.dataPoints ?? []).reduce((sum, point) => sum + Number(point.value), 0);
}

test('a row whose body is not an envelope is parked after parkAfterAttempts, never published, and does not block the others', async () => {
  const topic = uniqueTopic('outbox-park-body');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const recorded = recordingLogger();
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 3,
    logger: recorded.logger,
  });
  const parkedBefore = await counter('babelqueue.outbox.parked');

  const before = await writeOne(outbox, { n: 1 });
  const notEnvelope = await insertRawRow(pool, tables.outbox, { topic, body: '{"hello":"world"}' });
  const corrupt = await insertRawRow(pool, tables.outbox, { topic, body: '{"job": "urn:babel:x", tru' });
  const after = await writeOne(outbox, { n: 2 });

  await passUntil(relay, 'both bad rows to be parked', async () =>
    (await parkingRows(pool, tables.outbox)).every((row) => row.published_at !== null || row.parked_at !== null),
  );
  const rows = await parkingRows(pool, tables.outbox);
  const byId = new Map(rows.map((row) => [row.message_id, row]));
  for (const id of [notEnvelope, corrupt]) {
    expect(byId.get(id)).toMatchObject({ attempts: 3, published_at: null });
    expect(byId.get(id)!.parked_at).toBeInstanceOf(Date);
    expect(byId.get(id)!.last_error).toMatch(/not a BabelQueue envelope/);
  }
  expect(byId.get(notEnvelope)!.last_error).toMatch(/no URN/);
  expect(byId.get(corrupt)!.last_error).toMatch(/not valid JSON/);
  // The good rows went at the first pass, and only they reached the broker.
  const messages = await receiveN(consumer, 2);
  expect(messages.map((message) => message.getProperties()[BQ.messageId])).toEqual([before, after]);
  await expectNothing(consumer, 500);

  // Parked rows are never tried again: more passes change nothing.
  expect(await relay.drain()).toEqual({ published: 0, failed: 0, parked: 0 });
  expect((await parkingRows(pool, tables.outbox)).map((row) => row.attempts)).toEqual([0, 3, 3, 0]);

  // One line per parked row at warn; the failed attempts before it at debug only.
  const loud = recorded.loud();
  expect(loud).toHaveLength(2);
  for (const line of loud) expect(line).toMatch(/^warn outbox row .* parked after 3 attempt\(s\)/);
  expect(recorded.lines.filter((line) => line.level === 'debug')).toHaveLength(4);
  expect(relay.describe()).toMatchObject({ parked: 2, published: 2, failed: 4, parkingAvailable: true });
  expect((await counter('babelqueue.outbox.parked')) - parkedBefore).toBe(2);
});

test('parked()/requeue(): listed with their error; a re-queued row is pending again with a fresh budget', async () => {
  const topic = uniqueTopic('outbox-park-requeue');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 1,
    logger: recordingLogger().logger,
  });
  const first = await insertRawRow(pool, tables.outbox, { topic, body: '{"hello":"world"}' });
  const second = await insertRawRow(pool, tables.outbox, { topic, body: '[]' });
  expect(await relay.flush()).toEqual({ published: 0, failed: 0, parked: 2 });

  const listing = await relay.parked();
  expect(listing.total).toBe(2);
  expect(listing.rows.map((row) => row.messageId)).toEqual([first, second]);
  expect(listing.rows[0]).toMatchObject({ topic, attempts: 1, error: expect.stringMatching(/no URN/) });
  expect(listing.rows[1]!.error).toMatch(/a JSON array, not an object/);
  expect((await relay.parked({ limit: 1 })).rows).toHaveLength(1);

  await expect(relay.requeue({})).rejects.toThrow(/ids: \[\.\.\.\] } or { all: true }/);
  // The row is repaired (here: a real envelope written in its place), then re-queued.
  const repaired = EnvelopeCodec.encodeToBuffer(
    EnvelopeCodec.make(URN, { repaired: true }, { id: first, queue: topic }),
  );
  await pool.query(`UPDATE ${tables.outbox} SET body = $1 WHERE message_id = $2`, [repaired, first]);
  expect(await relay.requeue({ ids: [first] })).toEqual([first]);
  const [requeued] = await parkingRows(pool, tables.outbox);
  expect(requeued).toMatchObject({ attempts: 0, parked_at: null });
  expect(await relay.flush()).toEqual({ published: 1, failed: 0, parked: 0 });
  const [message] = await receiveN(consumer, 1);
  expect(message!.getProperties()[BQ.messageId]).toBe(first);
  expect((await relay.parked()).rows.map((row) => row.messageId)).toEqual([second]);
  expect(await relay.requeue({ all: true, topic: 'some-other-topic' })).toEqual([]);
  expect(await relay.requeue({ all: true })).toEqual([second]);
  expect((await relay.parked()).total).toBe(0);
});

test("a topic that cannot exist (no such namespace) is the row's fault: parked, the other topics go on", async () => {
  const topic = uniqueTopic('outbox-park-topic');
  const nowhere = `persistent://public/bq-no-such-namespace-${randomUUID().slice(0, 8)}/${topic}`;
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const recorded = recordingLogger();
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 2,
    logger: recorded.logger,
  });
  const lost = await writeOne(outbox, { n: 1 }, nowhere);
  const good = await writeOne(outbox, { n: 2 });

  await passUntil(relay, 'the row to an impossible topic to be parked', async () => {
    const rows = await parkingRows(pool, tables.outbox);
    return rows[0]!.parked_at !== null;
  });
  const [parked] = await parkingRows(pool, tables.outbox);
  expect(parked).toMatchObject({ message_id: lost, attempts: 2, published_at: null });
  expect(parked!.last_error).toMatch(/Namespace not found|TopicNotFound/);
  const [message] = await receiveN(consumer, 1);
  expect(message!.getProperties()[BQ.messageId]).toBe(good);
  // Not an outage: no "cannot publish" line, only the parked one.
  expect(recorded.loud()).toEqual([expect.stringMatching(/^warn outbox row .* parked after 2 attempt/)]);
  expect(relay.describe().brokerFailingSince).toBeNull();
});

test('a row the broker refuses for its size is parked', async () => {
  const topic = uniqueTopic('outbox-park-big');
  const tables = await freshTables(pool);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 2,
    logger: recordingLogger().logger,
  });
  const big = await writeOne(outbox, { blob: 'x'.repeat(6 * 1024 * 1024) });
  const small = await writeOne(outbox, { n: 1 });
  await passUntil(
    relay,
    'the big row to be parked',
    async () => (await parkingRows(pool, tables.outbox))[0]!.parked_at !== null,
  );
  const [parked, published] = await parkingRows(pool, tables.outbox);
  expect(parked).toMatchObject({ message_id: big, attempts: 2, published_at: null });
  expect(parked!.last_error).toMatch(/MessageTooBig/);
  expect(published!.published_at).toBeInstanceOf(Date);
  const [message] = await receiveN(consumer, 1);
  expect(message!.getProperties()[BQ.messageId]).toBe(small);
});

test('a table created before parking: good rows go, a bad row is retried (one error line), parked once migrated', async () => {
  const topic = uniqueTopic('outbox-park-old');
  const tables = await freshTables(pool);
  await pool.query(`ALTER TABLE ${tables.outbox} DROP COLUMN parked_at`);
  const consumer = await subscribe(topic);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const recorded = recordingLogger();
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 1,
    logger: recorded.logger,
  });
  const bad = await insertRawRow(pool, tables.outbox, { topic, body: '{"hello":"world"}' });
  const good = await writeOne(outbox);

  expect(await relay.flush()).toEqual({ published: 1, failed: 1, parked: 0 });
  const [message] = await receiveN(consumer, 1);
  expect(message!.getProperties()[BQ.messageId]).toBe(good);
  await passUntil(
    relay,
    'the bad row to be tried again',
    async () => (await storedRows(pool, tables.outbox))[0]!.attempts >= 3,
  );
  expect(relay.describe().parkingAvailable).toBe(false);
  const loud = recorded.loud();
  expect(loud).toHaveLength(1);
  expect(loud[0]).toContain(`error outbox table ${tables.outbox} has no parked_at column`);
  expect(loud[0]).toContain(outboxParkingMigrationSql(tables.outbox));

  await pool.query(outboxParkingMigrationSql(tables.outbox));
  await passUntil(
    relay,
    'the bad row to be parked after the migration',
    async () => (await parkingRows(pool, tables.outbox))[0]!.parked_at !== null,
  );
  expect((await relay.parked()).rows.map((row) => row.messageId)).toEqual([bad]);
  expect(relay.describe().parkingAvailable).toBe(true);
});

test('babelqueue-pulsar outbox parked / requeue: lists and re-queues on the real table', async () => {
  const topic = uniqueTopic('outbox-park-cli');
  const tables = await freshTables(pool);
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 1,
    logger: recordingLogger().logger,
  });
  const first = await insertRawRow(pool, tables.outbox, { topic, body: 'not json' });
  const second = await insertRawRow(pool, tables.outbox, { topic, body: '{"hello":"world"}' });
  expect((await relay.flush()).parked).toBe(2);

  const run = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      ['outbox', ...args],
      { out: (line) => out.push(line), err: (line) => err.push(line) },
      {
        BABELQUEUE_OUTBOX_DATABASE_URL: postgresUrl(),
      },
    );
    return { code, out, err };
  };
  const listed = await run('parked', '--table', tables.outbox);
  expect(listed.code).toBe(0);
  expect(listed.out).toHaveLength(3);
  expect(listed.out[0]).toMatch(
    new RegExp(`^${first} topic=${topic} attempts=1 parked=.* ago error=".*not valid JSON`),
  );
  expect(listed.out[2]).toBe(`2 of 2 parked row(s) in ${tables.outbox}`);
  const json = await run('parked', '--table', tables.outbox, '--json', '--max', '1');
  expect(JSON.parse(json.out.join('\n'))).toMatchObject({ total: 2, rows: [{ messageId: first, topic }] });

  expect((await run('requeue', '--table', tables.outbox)).code).toBe(2);
  expect((await run('requeue', '--table', tables.outbox, '--all', '--id', first)).code).toBe(2);
  const one = await run('requeue', '--table', tables.outbox, '--id', second);
  expect(one).toMatchObject({ code: 0, out: [`requeued ${second}`, `1 parked row(s) requeued in ${tables.outbox}`] });
  expect((await relay.parked()).rows.map((row) => row.messageId)).toEqual([first]);
  const all = await run('requeue', '--table', tables.outbox, '--all', '--json');
  expect(JSON.parse(all.out.join('\n'))).toEqual({ requeued: [first] });
  expect((await parkingRows(pool, tables.outbox)).map((row) => row.parked_at)).toEqual([null, null]);

  const unreachable = await runCli(
    ['outbox', 'parked'],
    { out: () => undefined, err: () => undefined },
    {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres',
    },
  );
  expect(unreachable).toBe(3);
  expect((await run('parked', '--table', 'bad name')).code).toBe(2);
});

test('write() refuses an invalid URN and lossy data, as the publisher does; nothing is written', async () => {
  const topic = uniqueTopic('outbox-refuse');
  const tables = await freshTables(pool);
  const outbox = new BabelOutbox({ table: tables.outbox, topic });
  const fn = () => 1;
  const refused: Array<[string, object, RegExp]> = [
    ['not a urn at all', {}, /"not a urn at all" is not a URN/],
    ['urn:', {}, /"urn:" is not a URN/],
    [URN, { price: NaN }, /data\.price is NaN/],
    [URN, { price: Infinity }, /data\.price is Infinity/],
    [URN, { run: fn }, /data\.run is a function/],
    [URN, { note: undefined }, /data\.note is undefined/],
    [URN, { order: { lines: [{ qty: 1 }, { qty: -Infinity }] } }, /data\.order\.lines\[1\]\.qty is -Infinity/],
    [URN, { order: { customer: { email: undefined } } }, /data\.order\.customer\.email is undefined/],
  ];
  const connection = await pool.connect();
  try {
    await connection.query('BEGIN');
    for (const [urn, data, message] of refused) {
      await expect(outbox.write(connection, urn, data)).rejects.toThrow(message);
    }
    await connection.query('COMMIT');
  } finally {
    connection.release();
  }
  expect(await storedRows(pool, tables.outbox)).toEqual([]);

  // The same rule, the same words, at the publisher: the outbox writes only what it would have sent.
  const publisher = new BabelPulsarClient({ client, topic });
  cleanups.push(() => publisher.close());
  for (const [urn, data, message] of refused) await expect(publisher.publish(urn, data)).rejects.toThrow(message);
});
