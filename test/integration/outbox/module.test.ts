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
import { newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
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

async function appWith(topic: string, table: string, relay?: false) {
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        client,
        topic,
        logger: quietLogger,
        outbox: { pool, table, migrate: true, ...(relay === false ? { relay } : { relay: { pollIntervalMs: 50 } }) },
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
