// The dashboard lists the upcoming stored schedules behind its guard (real PostgreSQL; the page's browser tests
// are in dashboard.test.ts).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import {
  BabelOutbox,
  BabelQueueDashboardModule,
  type BabelQueueDashboardOptions,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { outboxMigrationSql, scheduleMigrationSql } from '../../../lib/outbox/index.js';
import { newClient } from '../../support/broker.js';
import { newPool } from '../outbox/support.js';

jest.setTimeout(60_000);

class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-operator'] === 'yes';
  }
}

let client: PulsarClientLike;
let pool: pg.Pool;
const apps: INestApplication[] = [];
beforeAll(() => {
  client = newClient();
  pool = newPool('bq-dashboard-schedules');
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await client.close();
  await pool.end();
});

async function dashboardOn(options: Partial<BabelQueueDashboardOptions>): Promise<string> {
  @Module({
    imports: [BabelQueueDashboardModule.forRoot({ topics: ['orders.dlq'], guard: OperatorGuard, client, ...options })],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  apps.push(app);
  return `${await app.getUrl()}/babelqueue`.replace('[::1]', '127.0.0.1');
}

test('upcoming schedules, soonest first, for operators only; the page has their section', async () => {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
  const tables = { outbox: `outbox_${suffix}`, schedules: `schedules_${suffix}` };
  await pool.query(outboxMigrationSql(tables.outbox));
  await pool.query(scheduleMigrationSql(tables.schedules, tables.outbox));
  const outbox = new BabelOutbox({ table: tables.outbox, scheduleTable: tables.schedules, topic: 'orders' });
  await outbox.schedule(pool, 'urn:babel:orders:reminder', { order_id: 1 }, { delay: 7200_000, id: 'later' });
  await outbox.schedule(pool, 'urn:babel:reports:daily', {}, { cron: '*/5 * * * *', tz: 'Europe/Paris', id: 'often' });
  await outbox.schedule(pool, 'urn:babel:orders:reminder', {}, { delay: 3600_000, id: 'cancelled' });
  await outbox.cancelSchedule(pool, 'cancelled');
  const base = await dashboardOn({ schedules: { pool, table: tables.schedules } });

  expect((await fetch(`${base}/api/schedules`)).status).toBe(403);
  const operator = { headers: { 'x-operator': 'yes' } };
  const listed = (await (await fetch(`${base}/api/schedules`, operator)).json()) as Array<Record<string, unknown>>;
  expect(listed.map((schedule) => [schedule.id, schedule.state, schedule.cron])).toEqual([
    ['often', 'pending', '*/5 * * * *'],
    ['later', 'pending', null],
  ]);
  const ofUrn = (await (
    await fetch(`${base}/api/schedules?urn=urn:babel:orders:reminder`, operator)
  ).json()) as unknown[];
  expect(ofUrn).toHaveLength(1);
  expect(await (await fetch(base, operator)).text()).toContain('<h2>Upcoming schedules</h2>');
});

test('a dashboard without schedules answers 404 on their route, saying how to add them', async () => {
  const base = await dashboardOn({});
  const response = await fetch(`${base}/api/schedules`, { headers: { 'x-operator': 'yes' } });
  expect(response.status).toBe(404);
  expect(((await response.json()) as { message: string }).message).toMatch(/forRoot\(\{ schedules: \{ pool \} \}\)/);
});
