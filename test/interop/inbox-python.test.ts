// The inbox deduplicates messages the Python SDK published the same way as ours: by meta.id, read from the
// Python SDK's own envelope. The peer publishes each envelope twice with its PulsarTransport (a producer retry
// keeps the id); an app built with BabelQueueModule.forRoot and a PostgresInbox handles them on a real PostgreSQL.
// Peer: test/interop/peers/python.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { BabelContext, BabelHandler, BabelPulsarServer, BabelQueueModule, type SettledEvent } from '../../lib/index.js';
import { PostgresInbox, inboxMigrationSql } from '../../lib/inbox/index.js';
import { serviceUrl, uniqueTopic, waitFor } from '../support/broker.js';
import { quietLogger } from '../support/nest-app.js';
import { peerProduce, setupPeer } from './support/peers.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:orders:placed';
const MESSAGES = 20;

describe('the inbox with the Python SDK (real broker and PostgreSQL)', () => {
  const setup = setupPeer('python');
  if (!setup.ok) {
    it('sets up the Python interop peer', () => {
      throw new Error(`Python interop peer setup failed (${setup.code}): ${setup.reason}`);
    });
    return;
  }
  const peer = setup.peer;
  let pool: pg.Pool;
  beforeAll(() => {
    const url = process.env.BQ_PG_URL ?? 'postgres://postgres@127.0.0.1:15432/postgres';
    pool = new pg.Pool({ connectionString: url, max: 6, application_name: 'bq-inbox-python' });
  });
  afterAll(async () => {
    await pool.end();
  });

  it(`${MESSAGES} envelopes published twice each by the Python SDK: each handler body ran once, the copies were acknowledged as duplicates`, async () => {
    const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
    const inbox = `inbox_${suffix}`;
    const orders = `orders_${suffix}`;
    await pool.query(inboxMigrationSql(inbox));
    await pool.query(`CREATE TABLE ${orders} (message_id text NOT NULL, n integer NOT NULL)`);
    const topic = uniqueTopic('inbox-python');
    const ran: string[] = [];

    @Controller()
    class Orders {
      @BabelHandler(URN)
      async placed(@Payload('n') n: number, @Ctx() ctx: BabelContext) {
        ran.push(ctx.getEnvelope().meta.id);
        const tx = ctx.getTransaction<pg.PoolClient>();
        await tx.query(`INSERT INTO ${orders} (message_id, n) VALUES ($1, $2)`, [ctx.getEnvelope().meta.id, n]);
      }
    }
    @Module({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl: serviceUrl(),
          topic,
          logger: quietLogger,
          inbox: { store: new PostgresInbox({ pool, table: inbox }), every: true },
        }),
      ],
      controllers: [Orders],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const server = moduleRef.get(BabelPulsarServer);
    const settled: SettledEvent[] = [];
    server.on('settled', (event) => settled.push(event));
    const app = moduleRef.createNestMicroservice({ strategy: server, logger: false });
    await app.listen();
    try {
      const produced = await peerProduce(
        peer,
        topic,
        Array.from({ length: MESSAGES }, (_, i) => ({ urn: URN, data: { n: i + 1 }, copies: 2 })),
      );
      expect(produced).toHaveLength(MESSAGES);
      expect(produced.every((line) => line.how === 'PulsarTransport.publish x2')).toBe(true);
      const ids = produced.map((line) => line.id);

      const acks = () => settled.filter((event) => event.action === 'ack');
      await waitFor(`${2 * MESSAGES} acks`, () => acks().length === 2 * MESSAGES, 30_000);
      expect(acks().filter((event) => event.duplicate === true)).toHaveLength(MESSAGES);
      expect(ran.sort()).toEqual([...ids].sort());
      const rows = await pool.query<{ message_id: string }>(`SELECT message_id FROM ${orders} ORDER BY message_id`);
      expect(rows.rows.map((row) => row.message_id)).toEqual([...ids].sort());
      const kept = await pool.query<{ message_id: string }>(`SELECT message_id FROM ${inbox} ORDER BY message_id`);
      expect(kept.rows.map((row) => row.message_id)).toEqual([...ids].sort());
    } finally {
      await app.close();
    }
  });
});
