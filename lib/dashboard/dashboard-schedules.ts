import { BabelQueueError } from '../envelope/index.js';
import { withConnection, type OutboxPool } from '../outbox/relay-store.js';
import { listSchedules } from '../outbox/schedule-store.js';
import { DEFAULT_SCHEDULE_TABLE } from '../outbox/schedule-table.js';
import { checkOutboxTable } from '../outbox/table.js';
import type { ScheduledMessage } from '../schedule/index.js';

/** The dashboard's list of upcoming schedules (docs/scheduling.md): where they are stored, and how many to show. */
export interface DashboardSchedulesOptions {
  /** A `pg` Pool on the database of the schedule table (the module's `outbox.pool`). */
  pool: OutboxPool;
  /** The schedule table; default `babelqueue_schedules`. */
  table?: string;
  /** At most this many schedules, soonest first (default 100). */
  limit?: number;
}

/** Reads the pending schedules for the page: read-only, one statement on a connection of the pool. */
export class DashboardSchedules {
  private readonly table: string;
  private readonly limit: number;

  constructor(private readonly options: DashboardSchedulesOptions) {
    if (typeof options?.pool?.connect !== 'function') {
      throw new BabelQueueError('BabelQueueDashboardModule schedules needs { pool }: a pg Pool on the schedule table');
    }
    this.table = checkOutboxTable(options.table ?? DEFAULT_SCHEDULE_TABLE, 'schedules.table');
    this.limit = options.limit ?? 100;
    if (!Number.isInteger(this.limit) || this.limit < 1) {
      throw new BabelQueueError(`schedules.limit must be an integer >= 1, got ${String(options.limit)}`);
    }
  }

  /** Pending schedules, soonest first (of one URN when given). */
  upcoming(urn?: string): Promise<ScheduledMessage[]> {
    return withConnection(this.options.pool, (connection) =>
      listSchedules(connection, this.table, {
        limit: this.limit,
        ...(urn !== undefined && urn.trim() !== '' && { urn }),
      }),
    );
  }
}
