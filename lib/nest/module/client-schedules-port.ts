import type { ClientSchedules } from '../client/client-schedules.js';
import type { BabelOutbox } from '../../outbox/outbox.js';
import type { OutboxPool, OutboxPoolClient } from '../../outbox/relay-store.js';

async function onConnection<T>(pool: OutboxPool, work: (connection: OutboxPoolClient) => Promise<T>): Promise<T> {
  const connection = await pool.connect();
  const dropped = () => undefined; // a dropped connection surfaces as the query's rejection
  connection.on?.('error', dropped);
  try {
    return await work(connection);
  } finally {
    connection.off?.('error', dropped);
    connection.release();
  }
}

/**
 * The client's schedules on the module's outbox: each call is one statement of its own on the outbox's pool
 * (committed when it resolves). Inside a business transaction, BabelOutbox's methods take that transaction.
 */
export function clientSchedulesOn(outbox: BabelOutbox, pool: OutboxPool): ClientSchedules {
  return {
    schedule: (urn, data, options) =>
      onConnection(pool, (connection) => outbox.schedule(connection, urn as string, data, options)),
    cancel: (id) => onConnection(pool, (connection) => outbox.cancelSchedule(connection, id)),
    get: (id) => onConnection(pool, (connection) => outbox.getSchedule(connection, id)),
    list: (query) => onConnection(pool, (connection) => outbox.listSchedules(connection, query)),
  };
}
