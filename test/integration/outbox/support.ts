// A real PostgreSQL (scripts/lib/postgres.mjs) for the outbox suites: one outbox table per test.
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { outboxMigrationSql } from '../../../lib/index.js';
import { loadNative, onNative } from '../../support/broker.js';
import { PulsarWebSocketClient, type PulsarClientLike } from '../../../lib/index.js';

export const postgresUrl = (): string => process.env.BQ_PG_URL ?? 'postgres://postgres@127.0.0.1:15432/postgres';

export const newPool = (applicationName = 'bq-outbox-test', max = 4): pg.Pool =>
  new pg.Pool({ connectionString: postgresUrl(), max, application_name: applicationName });

/** Creates a fresh outbox table (and a business table next to it) and returns their names. */
export async function freshTables(pool: pg.Pool): Promise<{ outbox: string; orders: string }> {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
  const outbox = `outbox_${suffix}`;
  const orders = `orders_${suffix}`;
  await pool.query(outboxMigrationSql(outbox));
  await pool.query(`CREATE TABLE ${orders} (id integer PRIMARY KEY, total integer NOT NULL)`);
  return { outbox, orders };
}

export interface StoredRow {
  message_id: string;
  body: Buffer;
  attempts: number;
  last_error: string | null;
  published_at: Date | null;
}

export async function storedRows(pool: pg.Pool, table: string): Promise<StoredRow[]> {
  return (
    await pool.query<StoredRow>(
      `SELECT message_id, body, attempts, last_error, published_at FROM ${table} ORDER BY seq`,
    )
  ).rows;
}

/** A loopback port nothing listens on. */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A client of the kind under test pointed at a port where no broker runs. */
export function clientOnDeadPort(port: number): PulsarClientLike {
  if (onNative()) {
    return new (loadNative().Client)({
      serviceUrl: `pulsar://127.0.0.1:${port}`,
      operationTimeoutSeconds: 2,
      connectionTimeoutMs: 500,
    } as never);
  }
  return new PulsarWebSocketClient({ serviceUrl: `http://127.0.0.1:${port}`, operationTimeoutMs: 2000 });
}
