import type { ClientSchedules } from '../client/client-schedules.js';
import type { BabelOutbox } from '../../outbox/outbox.js';
import { withConnection, type OutboxPool } from '../../outbox/relay-store.js';

/**
 * The client's schedules on the module's outbox: each call is one statement of its own on the outbox's pool
 * (committed when it resolves). Inside a business transaction, BabelOutbox's methods take that transaction.
 */
export function clientSchedulesOn(outbox: BabelOutbox, pool: OutboxPool): ClientSchedules {
  return {
    schedule: (urn, data, options) =>
      withConnection(pool, (connection) => outbox.schedule(connection, urn as string, data, options)),
    cancel: (id) => withConnection(pool, (connection) => outbox.cancelSchedule(connection, id)),
    get: (id) => withConnection(pool, (connection) => outbox.getSchedule(connection, id)),
    list: (query) => withConnection(pool, (connection) => outbox.listSchedules(connection, query)),
  };
}
