// Benchmark (not a test), `npm run bench inbox`: what the inbox costs. A module-built app (bench/module-app.mjs)
// whose handler inserts one row, at concurrency 8, against the same handler and insert without the inbox (one
// autocommitted statement on the pool), on each client. The messages are on the topic before the app starts; the
// figure is messages handled per second between the first handler call and the last acknowledgement.
// BENCH_MESSAGES=<n> (default 2000), BENCH_ROUNDS=<n> (default 3, the variants alternate), BENCH_CLIENTS=websocket,native.
// PostgreSQL is the throw-away test cluster (scripts/lib/postgres.mjs, BQ_PG_PORT): fsync and synchronous_commit
// off, so a commit costs less here than on a production database. Figures are printed, never asserted.
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import * as lib from '../dist/esm/index.js';
import { PostgresInbox, inboxMigrationSql } from '../dist/esm/inbox/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { ensureNativeClient } from '../scripts/lib/native-client.mjs';
import { ensurePostgres, stopPostgres } from '../scripts/lib/postgres.mjs';
import { startModuleApp } from './module-app.mjs';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIENTS = (process.env.BENCH_CLIENTS ?? 'websocket,native').split(',').map((name) => name.trim());
const CONCURRENCY = 8;
const URN = 'urn:babel:bench:inbox';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A controller whose one handler inserts a row: through the inbox's transaction, or on the pool. */
function handlers(pool, orders, viaInbox, onCall) {
  class Handlers {
    async placed(data, ctx) {
      onCall();
      const sql = `INSERT INTO ${orders} (message_id, n) VALUES ($1, $2)`;
      const values = [ctx.getEnvelope().meta.id, data.n];
      if (viaInbox) await ctx.getTransaction().query(sql, values);
      else await pool.query(sql, values);
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Handlers.prototype, 'placed');
  Payload()(Handlers.prototype, 'placed', 0);
  Ctx()(Handlers.prototype, 'placed', 1);
  lib.BabelHandler(URN)(Handlers.prototype, 'placed', descriptor);
  Controller()(Handlers);
  return Handlers;
}

async function measure(serviceUrl, pool, viaInbox) {
  const tag = randomUUID().replaceAll('-', '').slice(0, 10);
  const topic = `bench-inbox-${tag}`;
  const orders = `orders_${tag}`;
  const inboxTable = `inbox_${tag}`;
  await pool.query(`CREATE TABLE ${orders} (message_id text NOT NULL, n integer NOT NULL)`);
  if (viaInbox) await pool.query(inboxMigrationSql(inboxTable));

  // The backlog first, with a publisher of its own: the figure is the consumer's.
  const publisher = await startModuleApp({
    lib,
    connection: { serviceUrl },
    topic,
    consumer: { subscription: 'never-used' },
    controllers: [],
  });
  for (let start = 0; start < MESSAGES; start += 200) {
    const batch = Array.from({ length: Math.min(200, MESSAGES - start) }, (_, i) => ({ n: start + i }));
    await Promise.all(batch.map((data) => publisher.client.publish(URN, data)));
  }
  await publisher.close();
  const stats = await fetch(`${broker.webUrl}/admin/v2/persistent/public/default/${topic}/internalStats`);
  const stored = (await stats.json()).numberOfEntries;
  if (stored !== MESSAGES) console.log(`  (${stored} messages stored for ${MESSAGES} published)`);

  let first = 0;
  let last = 0;
  let acked = 0;
  const Handlers = handlers(pool, orders, viaInbox, () => {
    if (first === 0) first = performance.now();
  });
  const running = await startModuleApp({
    lib,
    connection: { serviceUrl },
    topic,
    consumer: { subscription: 'bench', subscriptionInitialPosition: 'Earliest', concurrency: CONCURRENCY },
    controllers: [Handlers],
    more: viaInbox ? { inbox: { store: new PostgresInbox({ pool, table: inboxTable }), every: true } } : {},
  });
  running.server.on('settled', (event) => {
    if (event.action !== 'ack') return;
    acked += 1;
    last = performance.now();
  });
  try {
    const deadline = Date.now() + 120_000;
    while (acked < stored && Date.now() < deadline) await sleep(10);
    if (acked < stored) throw new Error(`${acked} of ${stored} acknowledged within 120 s`);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT message_id)::int AS ids FROM ${orders}`,
    );
    if (rows[0].ids !== MESSAGES) throw new Error(`${rows[0].ids} distinct ids in the rows for ${MESSAGES} messages`);
    if (rows[0].n !== rows[0].ids)
      console.log(`  (${rows[0].n - rows[0].ids} handled twice: the publisher stored copies)`);
    return (stored - 1) / ((last - first) / 1000); // deliveries per second, a copy skipped by the inbox included
  } finally {
    await running.close();
    await pool.query(`DROP TABLE ${orders}`);
    if (viaInbox) await pool.query(`DROP TABLE ${inboxTable}`);
  }
}

ensureNativeClient();
const broker = await ensureBroker();
const postgres = await ensurePostgres();
// Each inbox delivery holds a connection for the handler's duration: room for every one of them.
const pool = new pg.Pool({ connectionString: postgres.url, max: CONCURRENCY + 2 });
pool.on('error', () => undefined); // an idle connection ended by the cluster's stop at the very end
try {
  console.log(
    `inbox cost: one insert per message, concurrency ${CONCURRENCY}, ${MESSAGES} messages, module-built app (msg/s)`,
  );
  for (const kind of CLIENTS) {
    const serviceUrl = kind === 'native' ? broker.serviceUrl : broker.webUrl;
    for (let round = 1; round <= ROUNDS; round++) {
      const plain = await measure(serviceUrl, pool, false);
      const inbox = await measure(serviceUrl, pool, true);
      console.log(
        `${kind.padEnd(9)} round ${round}: without the inbox ${Math.round(plain)}, inbox ${Math.round(inbox)} ` +
          `= ${(inbox / plain).toFixed(2)}x`,
      );
    }
  }
} finally {
  await pool.end();
  if (postgres.started) await stopPostgres();
  if (broker.started) await stopBroker();
}
