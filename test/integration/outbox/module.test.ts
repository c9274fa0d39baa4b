// BabelQueueModule with `outbox: { pool }`: the writer is injectable and the relay runs by default.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import {
  BabelOutbox,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  OutboxRelay,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { BQ } from '../../../lib/pulsar/index.js';
import {
  loadNative,
  nativeServiceUrl,
  newClient,
  onNative,
  receiveN,
  uniqueTopic,
  waitFor,
  webUrl,
} from '../../support/broker.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';
import { quietLogger } from '../../support/nest-app.js';
import { newPool, storedRows } from './support.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:orders:created';
let client: PulsarClientLike;
let pool: pg.Pool;
beforeAll(() => {
  client = newClient();
  pool = newPool();
});
afterAll(async () => {
  await client.close();
  await pool.end();
});

@Injectable()
class Orders {
  constructor(@Inject(BabelOutbox) private readonly outbox: BabelOutbox) {}

  async place(id: number): Promise<string> {
    const connection = await pool.connect();
    try {
      await connection.query('BEGIN');
      const messageId = await this.outbox.write(connection, URN, { order_id: id });
      await connection.query('COMMIT');
      return messageId;
    } finally {
      connection.release();
    }
  }
}

async function appWith(topic: string, table: string, relay?: false, via: PulsarClientLike = client) {
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        client: via,
        topic,
        logger: quietLogger,
        outbox: {
          pool,
          table,
          migrate: true,
          ...(relay === false ? { relay } : { relay: { pollIntervalMs: 50, publishTimeoutMs: 1000 } }),
        },
      }),
    ],
    providers: [Orders],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(quietLogger)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

test('the module creates the table, injects BabelOutbox and relays what is committed; relay: false only writes', async () => {
  const topic = uniqueTopic('outbox-module');
  const table = `outbox_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const consumer = await client.subscribe({ topic, subscription: 'outbox-test' });
  try {
    const writer = await appWith(topic, table, false);
    expect(writer.get(OutboxRelay)).toBeNull();
    const first = await writer.get(Orders).place(1);
    await writer.close();
    expect((await storedRows(pool, table)).map((row) => row.published_at)).toEqual([null]);

    const app = await appWith(topic, table);
    const second = await app.get(Orders).place(2);
    app.get(OutboxRelay)!.wake();
    const messages = await receiveN(consumer, 2);
    expect(messages.map((m) => m.getProperties()[BQ.messageId])).toEqual([first, second]);
    // The health check carries the relay's counters and its outage state.
    const relay = app.get(OutboxRelay)!;
    await waitFor('the relay to count both rows', () => relay.describe().published === 2);
    expect(app.get(BabelQueueHealthIndicator).check()).toMatchObject({
      healthy: true,
      outbox: { running: true, published: 2, parked: 0, brokerFailingSince: null, parkingAvailable: true },
    });
    await app.close();
    expect((await storedRows(pool, table)).every((row) => row.published_at !== null)).toBe(true);
  } finally {
    await consumer.close();
  }
});

test("the health check reports the relay's outage while the broker is cut, and clears once rows go again", async () => {
  const target = new URL(onNative() ? nativeServiceUrl() : webUrl());
  const proxy = new TcpProxy(target.hostname, Number(target.port));
  await proxy.start();
  const url = `${onNative() ? 'pulsar' : 'http'}://127.0.0.1:${proxy.port}`;
  const proxied: PulsarClientLike = onNative()
    ? new (loadNative().Client)({ serviceUrl: url, operationTimeoutSeconds: 5, connectionTimeoutMs: 1000 } as never)
    : new PulsarWebSocketClient({ serviceUrl: url, operationTimeoutMs: 5000 });
  const topic = uniqueTopic('outbox-module-health');
  const table = `outbox_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const consumer = await client.subscribe({ topic, subscription: 'outbox-test' });
  const app = await appWith(topic, table, undefined, proxied);
  try {
    const relay = app.get(OutboxRelay)!;
    const health = app.get(BabelQueueHealthIndicator);
    await app.get(Orders).place(1);
    relay.wake();
    await waitFor('the first row to go', () => relay.describe().published === 1);

    proxy.pause();
    proxy.dropAll();
    const id = await app.get(Orders).place(2);
    relay.wake();
    await waitFor('the health check to name the outbox outage', () =>
      health.check().problems.some((problem) => problem.startsWith('the outbox relay cannot publish since')),
    );
    expect(health.check().outbox).toMatchObject({ brokerFailingSince: expect.any(Number), parked: 0 });

    proxy.resume();
    await waitFor('the row written during the cut to go', () => relay.describe().published === 2, 30_000);
    await waitFor('the outbox problem to clear', () => health.check().outbox?.brokerFailingSince === null, 30_000);
    expect(health.check().problems.filter((problem) => problem.includes('outbox'))).toEqual([]);
    const ids = new Set((await receiveN(consumer, 2)).map((m) => m.getProperties()[BQ.messageId]));
    expect(ids.has(id)).toBe(true);
  } finally {
    await app.close();
    await consumer.close();
    await proxied.close().catch(() => undefined);
    await proxy.stop();
  }
});
