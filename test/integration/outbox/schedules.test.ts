// One-off schedules stored beside the outbox, on a real PostgreSQL and the real broker, in module-built apps
// (BabelQueueModule.forRoot({ serviceUrl, outbox: { pool, schedules } })): fired through the relay once, with
// their bq-schedule-* properties; cancelled ones never; idempotent by id; only when the transaction commits.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import {
  BabelOutbox,
  BabelPulsarClient,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  type PulsarClientLike,
  type PulsarMessage,
} from '../../../lib/index.js';
import { SCHEDULE_PROPERTIES, outboxMigrationSql, scheduleMigrationSql } from '../../../lib/outbox/index.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { BQ } from '../../../lib/pulsar/index.js';
import { expectNothing, newClient, onNative, receiveN, serviceUrl, uniqueTopic, webUrl } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';
import { newPool, postgresUrl } from './support.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:orders:payment-reminder';
let client: PulsarClientLike;
let pool: pg.Pool;
beforeAll(() => {
  client = newClient();
  pool = newPool('bq-schedule-test', 8);
});
afterAll(async () => {
  await client.close();
  await pool.end();
});

/**
 * How late each message was stored by the broker after its tick, kept in test-results/ for docs/scheduling.md
 * (a figure, never an assertion: the machine is shared).
 */
function recordLateness(name: string, messages: PulsarMessage[]): void {
  const late = messages
    .map((m) => m.getPublishTimestamp() - Date.parse(m.getProperties()[SCHEDULE_PROPERTIES.tick]!))
    .sort((a, b) => a - b);
  const at = (q: number) => late[Math.min(late.length - 1, Math.floor(q * late.length))];
  const figures = {
    name,
    client: onNative() ? 'native' : 'websocket',
    count: late.length,
    p50: at(0.5),
    p99: at(0.99),
    max: late.at(-1),
  };
  fs.mkdirSync('test-results', { recursive: true });
  fs.appendFileSync('test-results/schedule-figures.jsonl', `${JSON.stringify(figures)}\n`);
}

const suffix = () => randomUUID().replaceAll('-', '').slice(0, 12);

async function appWith(topic: string, tables: { outbox: string; schedules: string }): Promise<INestApplication> {
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        logger: quietLogger,
        outbox: {
          pool,
          table: tables.outbox,
          migrate: true,
          relay: { pollIntervalMs: 50, publishTimeoutMs: 5000 },
          schedules: { table: tables.schedules, pollIntervalMs: 50 },
        },
      }),
    ],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(quietLogger)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

async function inTransaction<T>(work: (tx: pg.PoolClient) => Promise<T>, commit = true): Promise<T> {
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    const result = await work(tx);
    await tx.query(commit ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (error) {
    await tx.query('ROLLBACK'); // never hand the pool a connection inside an open transaction
    throw error;
  } finally {
    tx.release();
  }
}

test('a one-off schedule fires once, with its id and tick as properties; the same id twice is one schedule', async () => {
  const topic = uniqueTopic('schedule-once');
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const consumer = await client.subscribe({ topic, subscription: 'schedule-test' });
  const app = await appWith(topic, tables);
  try {
    const babel = app.get(BabelPulsarClient);
    const at = new Date(Date.now() + 700);
    const handle = await babel.schedule(URN, { order_id: 7 }, { at, id: 'reminder-7', key: 'order-7' });
    expect(handle).toEqual({ id: 'reminder-7', created: true, nextTick: at });
    const again = await babel.schedule(URN, { order_id: 7 }, { at, id: 'reminder-7' });
    expect(again).toEqual({ id: 'reminder-7', created: false, nextTick: at });
    expect((await babel.getSchedule('reminder-7'))?.state).toBe('pending');
    expect((await babel.listSchedules({ urn: URN })).map((s) => s.id)).toEqual(['reminder-7']);

    const [message] = await receiveN(consumer, 1);
    const properties = message!.getProperties();
    expect(properties[SCHEDULE_PROPERTIES.id]).toBe('reminder-7');
    expect(properties[SCHEDULE_PROPERTIES.tick]).toBe(at.toISOString());
    expect(properties[BQ.job]).toBe(URN);
    expect(JSON.parse(message!.getData().toString()).data).toEqual({ order_id: 7 });
    expect(message!.getPartitionKey()).toBe('order-7');
    await expectNothing(consumer, 1500);

    // The health check carries the dispatcher's state.
    expect(app.get(BabelQueueHealthIndicator).check()).toMatchObject({
      healthy: true,
      schedules: { running: true, failingSince: null, fired: 1, lastLatenessMs: expect.any(Number) },
    });
    const fired = await babel.getSchedule('reminder-7');
    expect(fired).toMatchObject({ state: 'fired', fired: 1, nextTick: null, lastTick: at });
    expect(await babel.cancelSchedule('reminder-7')).toBe(false); // fired already: nothing to cancel
    expect(await babel.listSchedules()).toEqual([]);
    // Scheduling the id once more is still the same (fired) schedule: nothing fires again.
    expect(await babel.schedule(URN, { order_id: 7 }, { delay: 0, id: 'reminder-7' })).toMatchObject({
      created: false,
      nextTick: null,
    });
    await expectNothing(consumer, 1000);
  } finally {
    await app.close();
    await consumer.close();
  }
});

test('a schedule written in a transaction exists only if it commits; cancel() inside one, too', async () => {
  const topic = uniqueTopic('schedule-tx');
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const consumer = await client.subscribe({ topic, subscription: 'schedule-test' });
  const app = await appWith(topic, tables);
  try {
    const outbox = app.get(BabelOutbox);
    await inTransaction((tx) => outbox.schedule(tx, URN, { order_id: 1 }, { delay: 300, id: 'rolled-back' }), false);
    expect(await outbox.getSchedule(pool, 'rolled-back')).toBeNull();

    await inTransaction((tx) => outbox.schedule(tx, URN, { order_id: 2 }, { delay: 300, id: 'kept' }));
    await inTransaction((tx) => outbox.schedule(tx, URN, { order_id: 3 }, { delay: 2000, id: 'cancelled' }));
    // A cancel that rolls back cancels nothing; one that commits does.
    await inTransaction((tx) => outbox.cancelSchedule(tx, 'cancelled'), false);
    expect((await outbox.getSchedule(pool, 'cancelled'))?.state).toBe('pending');
    expect(await inTransaction((tx) => outbox.cancelSchedule(tx, 'cancelled'))).toBe(true);
    expect((await outbox.getSchedule(pool, 'cancelled'))?.state).toBe('cancelled');

    const [message] = await receiveN(consumer, 1);
    expect(message!.getProperties()[SCHEDULE_PROPERTIES.id]).toBe('kept');
    await expectNothing(consumer, 3000);
  } finally {
    await app.close();
    await consumer.close();
  }
});

test('write() with { delay } or { at } keeps the row in the outbox until then', async () => {
  const topic = uniqueTopic('outbox-delay');
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const consumer = await client.subscribe({ topic, subscription: 'schedule-test' });
  const app = await appWith(topic, tables);
  try {
    const outbox = app.get(BabelOutbox);
    const later = await inTransaction((tx) => outbox.write(tx, URN, { order_id: 1 }, { delay: 1500 }));
    const sooner = await inTransaction((tx) => outbox.write(tx, URN, { order_id: 2 }, { at: Date.now() + 300 }));
    const first = await receiveN(consumer, 1);
    expect(first.map((m) => m.getProperties()[BQ.messageId])).toEqual([sooner]);
    const { rows } = await pool.query(`SELECT published_at FROM ${tables.outbox} WHERE message_id = $1`, [later]);
    expect(rows[0].published_at).toBeNull(); // not due yet when the sooner one went
    const second = await receiveN(consumer, 1);
    expect(second.map((m) => m.getProperties()[BQ.messageId])).toEqual([later]);
    await expect(inTransaction((tx) => outbox.write(tx, URN, {}, { delay: 1, at: new Date() }))).rejects.toThrow(
      /options.at or options.delay, not both/,
    );
  } finally {
    await app.close();
    await consumer.close();
  }
});

test('1,000 one-off schedules due within a few seconds, half cancelled: the other half delivered once each', async () => {
  const topic = uniqueTopic('schedule-many');
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const consumer = await client.subscribe({ topic, subscription: 'schedule-test', receiverQueueSize: 1000 });
  const app = await appWith(topic, tables);
  try {
    const outbox = app.get(BabelOutbox);
    const start = Date.now() + 2000;
    const ids = Array.from({ length: 1000 }, (_, index) => `many-${index}`);
    await inTransaction(async (tx) => {
      for (const [index, id] of ids.entries()) {
        await outbox.schedule(tx, URN, { n: index }, { id, at: start + (index % 100) * 30 });
      }
    });
    const cancelled = ids.filter((_, index) => index % 2 === 1);
    const results = await Promise.all(cancelled.map((id) => app.get(BabelPulsarClient).cancelSchedule(id)));
    expect(results.every(Boolean)).toBe(true);

    const received = await receiveN(consumer, 500, 40_000);
    await expectNothing(consumer, 2000);
    const firedIds = received.map((m) => m.getProperties()[SCHEDULE_PROPERTIES.id]!);
    expect(new Set(firedIds).size).toBe(500);
    expect(firedIds.filter((id) => cancelled.includes(id))).toEqual([]);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${tables.outbox}`);
    expect(rows[0].n).toBe(500);
    recordLateness('one-off-1000', received);
  } finally {
    await app.close();
    await consumer.close();
  }
});

test('a client without stored schedules says how to configure them', async () => {
  const babel = new BabelPulsarClient({ client, topic: 'nowhere' });
  await expect(babel.schedule(URN, {}, { delay: 1 })).rejects.toThrow(
    /needs stored schedules: BabelQueueModule.forRoot\(\{ outbox: \{ pool, schedules: true \} \}\)/,
  );
  await expect(babel.cancelSchedule('x')).rejects.toThrow(/cancelSchedule needs stored schedules/);
});

test('the CLI lists, runs now and cancels stored schedules, on the database only', async () => {
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  await pool.query(outboxMigrationSql(tables.outbox));
  await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
  const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic: 'cli' });
  await outbox.schedule(pool, URN, {}, { delay: 3600_000, id: 'in-an-hour' });
  await outbox.schedule(pool, 'urn:babel:reports:daily', {}, { cron: '0 9 * * *', tz: 'Europe/Paris', id: 'daily' });
  const cli = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      ['schedules', ...args, '--table', tables.schedules],
      { out: (line) => out.push(line), err: (line) => err.push(line) },
      { DATABASE_URL: postgresUrl() },
    );
    return { code, out, err };
  };
  const listed = await cli('list');
  expect(listed.code).toBe(0);
  expect(listed.out).toHaveLength(3);
  expect(listed.out.find((line) => line.startsWith('"daily"'))).toMatch(
    /urn="urn:babel:reports:daily" next=\S+ \(in .+\) cron="0 9 \* \* \*" tz="Europe\/Paris" fired=0/,
  );
  expect(listed.out.at(-1)).toBe(`2 pending schedule(s) listed from ${tables.schedules}`);
  expect((await cli('list', '--urn', URN, '--json')).out.join('\n')).toMatch(/"id": "in-an-hour"/);

  expect((await cli('run-now', '--id', 'in-an-hour')).out).toEqual(['due now "in-an-hour"']);
  const due = await outbox.getSchedule(pool, 'in-an-hour');
  expect(due!.nextTick!.getTime()).toBeLessThanOrEqual(Date.now() + 1000);

  expect(await cli('cancel', '--id', 'daily', '--id', 'nope')).toEqual({
    code: 1,
    out: ['cancelled "daily"', 'not pending "nope" (no such schedule, or fired, cancelled, ended)'],
    err: [],
  });
  expect((await outbox.getSchedule(pool, 'daily'))?.state).toBe('cancelled');
});

test('a schedule a year ahead is one row and one index entry, nothing in the outbox or on the broker', async () => {
  const topic = uniqueTopic('schedule-year');
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const consumer = await client.subscribe({ topic, subscription: 'schedule-test' });
  const app = await appWith(topic, tables);
  try {
    const inAYear = new Date(Date.now() + 365 * 24 * 3600_000);
    await app.get(BabelPulsarClient).schedule(URN, { order_id: 365 }, { at: inAYear, id: 'in-a-year' });
    await expectNothing(consumer, 1500); // many dispatcher passes (every 50 ms) meanwhile
    const count = async (table: string) => (await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
    expect([await count(tables.schedules), await count(tables.outbox)]).toEqual([1, 0]);
    const stats = (await (await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`)).json()) as {
      msgInCounter: number;
      subscriptions: Record<string, { msgDelayed?: number }>;
    };
    expect(stats.msgInCounter).toBe(0);
    expect(stats.subscriptions['schedule-test']?.msgDelayed ?? 0).toBe(0);
  } finally {
    await app.close();
    await consumer.close();
  }
});
