// A broker outage while rows are pending: the relay logs one line when it starts failing and one when it
// recovers, parks nothing (an outage is not the rows' fault), and publishes every row afterwards. The shared
// broker is never stopped: the relay's client goes through a TCP proxy that is cut and restored.
// BQ_OUTBOX_OUTAGE_ROWS / BQ_OUTBOX_OUTAGE_MS scale it (the documented figure: 10000 rows, 60000 ms).
import { jest } from '@jest/globals';
import pg from 'pg';
import {
  BabelOutbox,
  BabelProducerPool,
  OutboxRelay,
  PulsarWebSocketClient,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { BQ } from '../../../lib/pulsar/index.js';
import {
  loadNative,
  nativeServiceUrl,
  newClient,
  onNative,
  receiveN,
  sleep,
  uniqueTopic,
  waitFor,
  webUrl,
} from '../../support/broker.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';
import { freshTables, newPool, parkingRows, recordingLogger } from './support.js';

const ROWS = Number(process.env.BQ_OUTBOX_OUTAGE_ROWS ?? 300);
const OUTAGE_MS = Number(process.env.BQ_OUTBOX_OUTAGE_MS ?? 4000);
jest.setTimeout(120_000 + OUTAGE_MS + ROWS * 10);

const URN = 'urn:babel:orders:created';

let proxy: TcpProxy;
let proxied: PulsarClientLike;
let observer: PulsarClientLike;
let pool: pg.Pool;

beforeAll(async () => {
  const target = new URL(onNative() ? nativeServiceUrl() : webUrl());
  proxy = new TcpProxy(target.hostname, Number(target.port));
  await proxy.start();
  const url = `${onNative() ? 'pulsar' : 'http'}://127.0.0.1:${proxy.port}`;
  proxied = onNative()
    ? new (loadNative().Client)({ serviceUrl: url, operationTimeoutSeconds: 5, connectionTimeoutMs: 1000 } as never)
    : new PulsarWebSocketClient({ serviceUrl: url, operationTimeoutMs: 5000 });
  observer = newClient();
  pool = newPool('bq-outbox-outage');
});
afterAll(async () => {
  await proxied.close().catch(() => undefined);
  await observer.close();
  await proxy.stop();
  await pool.end();
});

test(`an outage with ${ROWS} pending rows: two lines at warn, nothing parked, every row published afterwards`, async () => {
  const topic = uniqueTopic('outbox-outage');
  const tables = await freshTables(pool);
  const consumer = await observer.subscribe({ topic, subscription: 'outbox-test' });
  const producers = new BabelProducerPool(proxied);
  const recorded = recordingLogger();
  // parkAfterAttempts 1: any failure counted against the rows would park them at once.
  const relay = new OutboxRelay({
    pool,
    producers,
    table: tables.outbox,
    parkAfterAttempts: 1,
    publishTimeoutMs: 1000,
    pollIntervalMs: 50,
    logger: recorded.logger,
  });
  try {
    // The relay publishes while the broker answers…
    const outbox = new BabelOutbox({ table: tables.outbox, topic });
    const writeRows = async (count: number, from: number): Promise<string[]> => {
      const connection = await pool.connect();
      const ids: string[] = [];
      try {
        await connection.query('BEGIN');
        for (let n = from; n < from + count; n++) ids.push(await outbox.write(connection, URN, { n }));
        await connection.query('COMMIT');
      } finally {
        connection.release();
      }
      return ids;
    };
    const ids = await writeRows(1, 0);
    relay.start();
    relay.wake();
    await waitFor('the first row to be published', async () => relay.describe().published === 1);

    // …then the broker goes away with the rows still to come.
    proxy.pause();
    proxy.dropAll();
    ids.push(...(await writeRows(ROWS, 1)));
    relay.wake();
    const cutAt = Date.now();
    await waitFor('the relay to notice', () => relay.describe().brokerFailingSince !== null);
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - cutAt)));
    const during = relay.describe();
    expect(during.parked).toBe(0);
    expect(during.failed).toBeGreaterThan(0);
    proxy.resume();
    const restoredAt = Date.now();

    await waitFor(
      'every row to be published',
      async () => (await parkingRows(pool, tables.outbox)).every((row) => row.published_at !== null),
      60_000 + ROWS * 5,
    );
    const drainedMs = Date.now() - restoredAt;
    await waitFor('the recovery line', () => recorded.loud().length === 2, 30_000);
    // At least once: a send the proxy cut may have been stored and be published again, so count distinct ids.
    const seen = new Set<string>();
    let received = 0;
    while (seen.size < ids.length) {
      const batch = await receiveN(consumer, Math.min(100, ids.length - seen.size), 60_000);
      received += batch.length;
      for (const message of batch) seen.add(message.getProperties()[BQ.messageId]!);
    }
    expect(seen).toEqual(new Set(ids));

    const loud = recorded.loud();
    expect(loud[0]).toMatch(/^warn outbox relay cannot publish: .*one line when it recovers$/);
    expect(loud[1]).toMatch(
      /^warn outbox relay publishes again after \d+\.\d s: \d+ failed attempt\(s\) on \d+ row\(s\)/,
    );
    expect(recorded.lines.filter((line) => line.level === 'debug').length).toBeGreaterThan(0);
    expect(relay.describe()).toMatchObject({ parked: 0, brokerFailingSince: null, published: ids.length });
    expect((await parkingRows(pool, tables.outbox)).every((row) => row.parked_at === null)).toBe(true);
    // The figure docs/outbox.md reports (run with BQ_OUTBOX_OUTAGE_ROWS=10000 BQ_OUTBOX_OUTAGE_MS=60000).
    console.log(
      `[outbox outage] ${ROWS} rows, outage ${(OUTAGE_MS / 1000).toFixed(0)} s: ${loud.length} line(s) at info/warn, ` +
        `${recorded.lines.length - loud.length} at debug, ${during.failed} failed attempts during it, ` +
        `all ${ids.length} published ${(drainedMs / 1000).toFixed(1)} s after the broker came back, ` +
        `${received} received (duplicates allowed: at least once); ${loud.join(' | ')}`,
    );
  } finally {
    await relay.stop();
    await producers.close();
    await consumer.close();
  }
});
