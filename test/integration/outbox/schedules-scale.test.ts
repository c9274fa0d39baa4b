// The issue-size runs of docs/scheduling.md, opt-in (BQ_SCHEDULE_SCALE=1: about 40 s per client): 10,000 one-off
// schedules due over 20 s with 5,000 cancelled before they are due, on default dispatcher and relay settings; and
// a dispatcher pass with 100,000 schedules pending a day ahead. Assertions are behaviour only; the timings are
// appended to test-results/schedule-figures.jsonl for the docs.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { BabelOutbox, BabelProducerPool, OutboxRelay } from '../../../lib/index.js';
import {
  SCHEDULE_PROPERTIES,
  ScheduleDispatcher,
  outboxMigrationSql,
  scheduleMigrationSql,
} from '../../../lib/outbox/index.js';
import { expectNothing, newClient, onNative, receiveN, uniqueTopic } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';
import { newPool } from './support.js';

jest.setTimeout(300_000);
const suffix = () => randomUUID().replaceAll('-', '').slice(0, 12);
const scale = process.env.BQ_SCHEDULE_SCALE === '1' ? describe : describe.skip;

function record(figures: Record<string, unknown>): void {
  fs.mkdirSync('test-results', { recursive: true });
  fs.appendFileSync(
    'test-results/schedule-figures.jsonl',
    `${JSON.stringify({ ...figures, client: onNative() ? 'native' : 'websocket' })}\n`,
  );
}

scale('at the issue size', () => {
  const pool = newPool('bq-schedule-scale', 8);
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const options = { pool, table: tables.schedules, outboxTable: tables.outbox, metrics: false, logger: quietLogger };
  beforeAll(async () => {
    await pool.query(outboxMigrationSql(tables.outbox));
    await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
  });
  afterAll(() => pool.end());

  test('a pass costs the same with 100,000 schedules pending a day ahead as with none', async () => {
    const dispatcher = new ScheduleDispatcher(options);
    const averagePassMs = async (passes: number) => {
      const start = process.hrtime.bigint();
      for (let pass = 0; pass < passes; pass++) expect(await dispatcher.flush()).toEqual({ fired: 0, claimed: 0 });
      return Number(process.hrtime.bigint() - start) / 1e6 / passes;
    };
    await averagePassMs(20);
    const empty = await averagePassMs(200);
    await pool.query(`INSERT INTO ${tables.schedules} (id, urn, topic, data, next_tick)
      SELECT 'far-' || g, 'urn:babel:scale:far', 'far', '{}', now() + interval '1 day' + g * interval '1 second'
        FROM generate_series(1, 100000) g`);
    await pool.query(`ANALYZE ${tables.schedules}`);
    await averagePassMs(20);
    const full = await averagePassMs(200);
    record({ name: 'pass-100k-pending', emptyPassMs: empty, with100kPendingPassMs: full });
    await pool.query(`DELETE FROM ${tables.schedules}`);
  });

  test('10,000 one-off schedules due over 20 s, 5,000 cancelled: 0 cancelled delivered, 5,000 once each', async () => {
    const client = newClient();
    const producers = new BabelProducerPool(client);
    const topic = uniqueTopic('schedule-scale');
    const consumer = await client.subscribe({ topic, subscription: 'scale', receiverQueueSize: 1000 });
    const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic });
    const relay = new OutboxRelay({ pool, producers, table: tables.outbox, metrics: false, logger: quietLogger });
    const dispatcher = new ScheduleDispatcher({ ...options, onFired: () => relay.wake() });
    try {
      const firstDue = Date.now() + 15_000;
      const ids = Array.from({ length: 10_000 }, (_, index) => `scale-${index}`);
      const tx = await pool.connect();
      await tx.query('BEGIN');
      for (const [index, id] of ids.entries()) {
        await outbox.schedule(tx, 'urn:babel:scale:once', { n: index }, { id, at: firstDue + (index % 1000) * 20 });
      }
      await tx.query('COMMIT');
      tx.release();
      const cancelled = new Set(ids.filter((_, index) => index % 2 === 1));
      for (const id of cancelled) expect(await outbox.cancelSchedule(pool, id)).toBe(true);
      expect(Date.now()).toBeLessThan(firstDue); // every cancel came before its schedule was due
      relay.start();
      dispatcher.start();
      const received = await receiveN(consumer, 5000, 120_000);
      await expectNothing(consumer, 3000);
      const firedIds = received.map((message) => message.getProperties()[SCHEDULE_PROPERTIES.id]!);
      expect(new Set(firedIds).size).toBe(5000);
      expect(firedIds.filter((id) => cancelled.has(id))).toEqual([]);
      const late = received
        .map((m) => m.getPublishTimestamp() - Date.parse(m.getProperties()[SCHEDULE_PROPERTIES.tick]!))
        .sort((a, b) => a - b);
      const at = (q: number) => late[Math.min(late.length - 1, Math.floor(q * late.length))];
      record({
        name: 'one-off-10000-half-cancelled',
        delivered: received.length,
        p50: at(0.5),
        p99: at(0.99),
        max: late.at(-1),
      });
    } finally {
      await dispatcher.stop();
      await relay.stop();
      await consumer.close();
      await producers.close();
      await client.close();
    }
  });
});
