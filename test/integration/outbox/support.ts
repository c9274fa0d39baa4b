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

/** Inserts a row as another program might: any body, any topic (BabelOutbox.write would refuse most of these). */
export async function insertRawRow(
  pool: pg.Pool,
  table: string,
  row: { topic: string; body: Buffer | string; messageId?: string },
): Promise<string> {
  const messageId = row.messageId ?? randomUUID();
  await pool.query(`INSERT INTO ${table} (message_id, topic, body) VALUES ($1, $2, $3)`, [
    messageId,
    row.topic,
    Buffer.isBuffer(row.body) ? row.body : Buffer.from(row.body, 'utf8'),
  ]);
  return messageId;
}

export interface ParkingRow {
  message_id: string;
  attempts: number;
  last_error: string | null;
  published_at: Date | null;
  parked_at: Date | null;
}

export async function parkingRows(pool: pg.Pool, table: string): Promise<ParkingRow[]> {
  return (
    await pool.query<ParkingRow>(
      `SELECT message_id, attempts, last_error, published_at, parked_at FROM ${table} ORDER BY seq`,
    )
  ).rows;
}

/** A logger that keeps every line with its level, for tests that count what is logged. */
export function recordingLogger(): {
  lines: Array<{ level: 'log' | 'warn' | 'error' | 'debug'; message: string }>;
  logger: Record<'log' | 'warn' | 'error' | 'debug', (message: string) => void>;
  loud(): string[];
} {
  const lines: Array<{ level: 'log' | 'warn' | 'error' | 'debug'; message: string }> = [];
  const at = (level: 'log' | 'warn' | 'error' | 'debug') => (message: string) => void lines.push({ level, message });
  return {
    lines,
    logger: { log: at('log'), warn: at('warn'), error: at('error'), debug: at('debug') },
    /** The lines at info level and above. */
    loud: () => lines.filter((line) => line.level !== 'debug').map((line) => `${line.level} ${line.message}`),
  };
}
