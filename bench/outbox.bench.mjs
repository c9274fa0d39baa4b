// Benchmark (not a test): rows relayed per second from a real PostgreSQL outbox to the real broker, on each client
// (WebSocket, then native when pulsar-client loads). The rows are written first (one transaction), then one relay
// drains them in batches of 100 (each body checked with the consumer's codec, as always).
// Run with `npm run bench outbox` (builds first). BENCH_ROWS=<rows>, BENCH_CLIENTS=websocket,native to tune.
// BENCH_DEDUP=1: the relay the broker deduplicates (a producer name, each row stamped with a sequence id first), on
// a topic of a namespace with deduplication on (docs/exactly-once.md#a-relay-the-broker-deduplicates).
// Figures are printed, never asserted.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import {
  BabelOutbox,
  BabelProducerPool,
  OutboxRelay,
  outboxMigrationSql,
  PulsarWebSocketClient,
} from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { ensurePostgres, stopPostgres } from '../scripts/lib/postgres.mjs';

const ROWS = Number(process.env.BENCH_ROWS ?? 5000);
const CLIENTS = (process.env.BENCH_CLIENTS ?? 'websocket,native').split(',').map((name) => name.trim());
const DEDUP = process.env.BENCH_DEDUP === '1';
const DEDUP_NAMESPACE = 'public/babelqueue-dedup';
const broker = await ensureBroker();
const postgres = await ensurePostgres();
const pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
if (DEDUP) {
  await fetch(`${broker.webUrl}/admin/v2/namespaces/${DEDUP_NAMESPACE}`, { method: 'PUT' });
  const enabled = await fetch(`${broker.webUrl}/admin/v2/namespaces/${DEDUP_NAMESPACE}/deduplication`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'true',
  });
  if (!enabled.ok) throw new Error(`enabling deduplication on ${DEDUP_NAMESPACE}: HTTP ${enabled.status}`);
}

function clientOf(kind) {
  if (kind === 'websocket') return new PulsarWebSocketClient({ serviceUrl: broker.webUrl });
  try {
    const { Client } = createRequire(import.meta.url)('pulsar-client');
    return new Client({ serviceUrl: broker.serviceUrl });
  } catch (error) {
    console.log(`outbox relay : native client not loadable (npm run native:setup): ${error.message}`);
    return null;
  }
}

async function measure(kind) {
  const client = clientOf(kind);
  if (!client) return;
  const producers = new BabelProducerPool(client);
  const table = `outbox_bench_${randomUUID().replaceAll('-', '').slice(0, 8)}`;
  const topic = DEDUP
    ? `persistent://${DEDUP_NAMESPACE}/outbox-bench-${randomUUID().slice(0, 8)}`
    : `outbox-bench-${randomUUID().slice(0, 8)}`;
  try {
    await pool.query(outboxMigrationSql(table));
    const outbox = new BabelOutbox({ table, topic });
    const connection = await pool.connect();
    const writeStart = process.hrtime.bigint();
    await connection.query('BEGIN');
    for (let n = 0; n < ROWS; n++)
      await outbox.write(connection, 'urn:babel:orders:created', { order_id: n, note: 'Café ☕' });
    await connection.query('COMMIT');
    connection.release();
    const writeSeconds = Number(process.hrtime.bigint() - writeStart) / 1e9;

    const relay = DEDUP
      ? new OutboxRelay({ pool, table, metrics: false, deduplication: { producerName: `bench-${table}`, client } })
      : new OutboxRelay({ pool, producers, table, metrics: false });
    if (!DEDUP) await producers.producerFor(topic); // the producer's creation is not part of the figure
    const relayStart = process.hrtime.bigint();
    const result = await relay.drain();
    const relaySeconds = Number(process.hrtime.bigint() - relayStart) / 1e9;
    console.log(
      `outbox write : ${ROWS} rows in ${writeSeconds.toFixed(2)} s = ${Math.round(ROWS / writeSeconds)} rows/s (one transaction)`,
    );
    console.log(
      `outbox relay : ${result.published} rows in ${relaySeconds.toFixed(2)} s = ${Math.round(result.published / relaySeconds)} rows/s ` +
        `(batches of 100, ${kind} client, published and marked${DEDUP ? ', deduplicating relay' : ''})`,
    );
    await relay.stop();
    await pool.query(`DROP TABLE ${table}`);
  } finally {
    await producers.close();
    await client.close();
  }
}

try {
  for (const kind of CLIENTS) await measure(kind);
} finally {
  await pool.end();
  if (postgres.started) await stopPostgres();
  if (broker.started) await stopBroker();
}
