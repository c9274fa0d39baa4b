// Recurring schedules on a real PostgreSQL and the real broker: one firing per tick across several instances of a
// module-built app (instances stopping and starting meanwhile), the missed-tick policies, and @BabelSchedule
// declarations that never move a tick when instances start again.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Module, type INestMicroservice } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BabelContext, BabelHandler, BabelOutbox, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import {
  BabelSchedule,
  ScheduleDispatcher,
  SCHEDULE_PROPERTIES,
  outboxMigrationSql,
  scheduleMigrationSql,
  type OutboxPool,
} from '../../../lib/outbox/index.js';
import { onNative, serviceUrl, sleep, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';
import { newPool } from './support.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:reports:every-second';
let pool: pg.Pool;
beforeAll(() => {
  pool = newPool('bq-recurring-test', 12);
});
afterAll(async () => {
  await pool.end();
});

const suffix = () => randomUUID().replaceAll('-', '').slice(0, 12);

interface Handled {
  tick: string;
  messageId: string;
  instance: number;
  at: number;
}

/** A module-built microservice: consumes the topic (Shared), runs a relay and a dispatcher, declares the schedule. */
async function instance(
  number: number,
  topic: string,
  tables: { outbox: string; schedules: string },
  handled: Handled[],
): Promise<INestMicroservice> {
  @Controller()
  class ReportsController {
    @BabelHandler(URN)
    @BabelSchedule({ id: `every-second-${tables.schedules}`, cron: '* * * * * *', missed: 'skip' })
    onTick(@Ctx() ctx: BabelContext): void {
      const properties = ctx.getProperties();
      handled.push({
        tick: properties[SCHEDULE_PROPERTIES.tick]!,
        messageId: properties['bq-message-id']!,
        instance: number,
        at: Date.now(),
      });
    }
  }
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        logger: quietLogger,
        consumer: { subscription: 'reports', subscriptionInitialPosition: 'Earliest' },
        outbox: {
          pool,
          table: tables.outbox,
          migrate: true,
          relay: { pollIntervalMs: 100 },
          schedules: { table: tables.schedules, pollIntervalMs: 100 },
        },
      }),
    ],
    controllers: [ReportsController],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(quietLogger)
    .compile();
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
  await app.listen();
  return app;
}

test('a schedule every second on 3 instances, one stopping and another starting: one firing per tick', async () => {
  const topic = uniqueTopic('schedule-every-second');
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  const handled: Handled[] = [];
  // Started together, as a deployment's instances do (each migrates and declares the schedule).
  const started = await Promise.allSettled([1, 2, 3].map((n) => instance(n, topic, tables, handled)));
  const apps = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  try {
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    await sleep(4000);
    await apps.shift()!.close(); // instance 1 stops
    await sleep(2000);
    apps.push(await instance(4, topic, tables, handled)); // instance 4 starts (and declares the schedule again)
    await sleep(4000);
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
  // Every tick in the outbox once: consecutive seconds, no tick twice, none missing.
  const { rows } = await pool.query<{ tick: string; n: number }>(
    `SELECT headers->>'${SCHEDULE_PROPERTIES.tick}' AS tick, count(*)::int AS n FROM ${tables.outbox} GROUP BY 1 ORDER BY 1`,
  );
  expect(rows.length).toBeGreaterThanOrEqual(8);
  expect(rows.filter((row) => row.n !== 1)).toEqual([]);
  const ticks = rows.map((row) => Date.parse(row.tick));
  expect(ticks.slice(1).map((tick, index) => tick - ticks[index]!)).toEqual(ticks.slice(1).map(() => 1000));
  // Each tick handled once, with one message (a redelivery would carry the same meta.id); ticks published after
  // the last consumer closed stay on the topic, so the last one or two may not be handled.
  const handledTicks = new Set(handled.map((h) => h.tick));
  expect([...handledTicks].filter((tick) => !rows.some((row) => row.tick === tick))).toEqual([]);
  expect(handledTicks.size).toBeGreaterThanOrEqual(rows.length - 2);
  const idsByTick = new Map<string, Set<string>>();
  for (const h of handled) idsByTick.set(h.tick, (idsByTick.get(h.tick) ?? new Set()).add(h.messageId));
  expect([...idsByTick.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  expect(new Set(handled.map((h) => h.instance)).size).toBeGreaterThan(1); // the work was shared

  const late = handled.map((h) => h.at - Date.parse(h.tick)).sort((a, b) => a - b);
  const at = (q: number) => late[Math.min(late.length - 1, Math.floor(q * late.length))];
  fs.mkdirSync('test-results', { recursive: true });
  fs.appendFileSync(
    'test-results/schedule-figures.jsonl',
    `${JSON.stringify({ name: 'every-second-3-instances', client: onNative() ? 'native' : 'websocket', ticks: rows.length, handled: handled.length, p50: at(0.5), p99: at(0.99), max: late.at(-1) })}\n`,
  );
});

test('ticks missed while nothing ran follow the policy: skip drops them, once fires one, all fires each', async () => {
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  await pool.query(outboxMigrationSql(tables.outbox));
  await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
  const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic: 'missed' });
  for (const missed of ['skip', 'once', 'all'] as const) {
    await outbox.schedule(pool, URN, {}, { cron: '* * * * * *', missed, id: missed });
  }
  // As if every instance had been down for 30 s: the next tick is 30 s ago.
  await pool.query(`UPDATE ${tables.schedules} SET next_tick = date_trunc('second', now()) - interval '30 seconds'`);
  const dispatcher = new ScheduleDispatcher({
    pool,
    table: tables.schedules,
    outboxTable: tables.outbox,
    missedAfterMs: 5000,
    metrics: false,
    logger: quietLogger,
  });
  await dispatcher.flush(); // one pass, one transaction: the same now() for the three
  const { rows } = await pool.query<{ id: string; n: number }>(
    `SELECT headers->>'${SCHEDULE_PROPERTIES.id}' AS id, count(*)::int AS n FROM ${tables.outbox} GROUP BY 1`,
  );
  const fired = Object.fromEntries(rows.map((row) => [row.id, row.n]));
  expect(fired.all).toBe(31); // the 31 due ticks, each
  expect([5, 6]).toContain(fired.skip); // only the ticks of the last 5 s (missedAfterMs)
  expect(fired.once).toBe(fired.skip! + 1); // those, and one for the 25 missed
  const next = await pool.query(`SELECT DISTINCT next_tick > now() AS future FROM ${tables.schedules}`);
  expect(next.rows).toEqual([{ future: true }]);
});

test('declaring a schedule again keeps its next tick; a changed cron moves it; a cancelled one stays cancelled', async () => {
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  await pool.query(outboxMigrationSql(tables.outbox));
  await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
  const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic: 'declared' });
  const first = await outbox.declareSchedule(
    pool,
    URN,
    { v: 1 },
    { id: 'nightly', cron: '0 2 * * *', tz: 'Europe/Paris' },
  );
  expect(first.created).toBe(true);
  const again = await outbox.declareSchedule(
    pool,
    URN,
    { v: 2 },
    { id: 'nightly', cron: '0 2 * * *', tz: 'Europe/Paris' },
  );
  expect(again).toEqual({ id: 'nightly', created: false, nextTick: first.nextTick });
  expect((await outbox.getSchedule(pool, 'nightly'))?.data).toEqual({ v: 2 });
  const moved = await outbox.declareSchedule(
    pool,
    URN,
    { v: 2 },
    { id: 'nightly', cron: '0 3 * * *', tz: 'Europe/Paris' },
  );
  const parisHour = (date: Date) =>
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', hourCycle: 'h23' }).format(date);
  expect([parisHour(first.nextTick!), parisHour(moved.nextTick!)]).toEqual(['02', '03']);
  expect(await outbox.cancelSchedule(pool, 'nightly')).toBe(true);
  const cancelled = await outbox.declareSchedule(
    pool,
    URN,
    {},
    { id: 'nightly', cron: '0 4 * * *', tz: 'Europe/Paris' },
  );
  expect(cancelled.nextTick).toBeNull();
  expect((await outbox.getSchedule(pool, 'nightly'))?.state).toBe('cancelled');
});

test('an instance that dies in the middle of a pass wrote nothing: another fires the tick, once', async () => {
  const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
  await pool.query(outboxMigrationSql(tables.outbox));
  await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
  const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic: 'dying' });
  await outbox.schedule(pool, URN, {}, { at: new Date(Date.now() - 1000), id: 'once' });
  // Its connection is destroyed where it would commit, as when the process is killed: the server rolls back.
  const dying: OutboxPool = {
    async connect() {
      const connection = await pool.connect();
      return {
        query: (sql: string, parameters?: unknown[]) => {
          if (sql !== 'COMMIT') return connection.query(sql, parameters);
          connection.release(new Error('kill -9'));
          return Promise.reject(new Error('connection terminated (kill -9)'));
        },
        release: () => undefined,
      };
    },
  };
  const options = { table: tables.schedules, outboxTable: tables.outbox, metrics: false, logger: quietLogger };
  await expect(new ScheduleDispatcher({ ...options, pool: dying }).flush()).rejects.toThrow(/kill -9/);
  const survivor = new ScheduleDispatcher({ ...options, pool });
  await waitFor('the survivor to fire the tick', async () => (await survivor.flush()).fired === 1);
  expect(await survivor.flush()).toEqual({ fired: 0, claimed: 0 });
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${tables.outbox}`);
  expect(rows[0].n).toBe(1);
  expect((await outbox.getSchedule(pool, 'once'))?.state).toBe('fired');
});

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

test('the dispatcher counts what it fires and how late, in OpenTelemetry', async () => {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  try {
    const tables = { outbox: `outbox_${suffix()}`, schedules: `schedules_${suffix()}` };
    await pool.query(outboxMigrationSql(tables.outbox));
    await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
    const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic: 'metered' });
    await outbox.schedule(pool, URN, {}, { at: new Date(Date.now() - 250), id: 'a' });
    await outbox.schedule(pool, URN, {}, { at: new Date(Date.now() - 250), id: 'b' });
    const dispatcher = new ScheduleDispatcher({
      pool,
      table: tables.schedules,
      outboxTable: tables.outbox,
      logger: quietLogger,
    });
    expect(await dispatcher.flush()).toEqual({ fired: 2, claimed: 2 });
    const collected = await reader.collect();
    const found = collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const fired = found.find((metric) => metric.descriptor.name === 'babelqueue.schedule.fired');
    expect(fired?.dataPoints.map((point) => [point.attributes['messaging.destination.name'], point.value])).toEqual([
      ['metered', 2],
    ]);
    const lateness = found.find((metric) => metric.descriptor.name === 'babelqueue.schedule.lateness');
    const histogram = lateness?.dataPoints[0]?.value as { count: number; min?: number } | undefined;
    expect(histogram?.count).toBe(2);
    expect(histogram?.min).toBeGreaterThanOrEqual(200); // written at least as late as the ticks were in the past
  } finally {
    await meterProvider.shutdown();
    metrics.disable();
  }
});
