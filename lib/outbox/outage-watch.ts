/** What the relay logs about an outage: one line when it starts, one when it ends. */
export type OutageReport =
  { kind: 'down'; error: string } | { kind: 'up'; downForMs: number; failedAttempts: number; rows: number };

/**
 * Follows one cause of failure (the broker, the database) across the relay's passes so that an outage is
 * reported twice, when it starts and when it ends, however many rows and passes fail in between. Pure: the
 * caller passes the time and logs the reports.
 *
 * The end is a pass without such a failure that either confirms it (a row that had failed was published, or the
 * database answered) or comes `quietMs` after the last failure: by then every row that failed was due again, so
 * a row still failing would have been seen.
 */
export class OutageWatch {
  private since: number | null = null;
  private lastFailureAt = 0;
  private attempts = 0;
  private readonly rows = new Set<string>();
  private error: string | null = null;

  constructor(private readonly quietMs: number) {}

  /** Since when this cause fails (epoch ms), null when it does not. */
  get failingSince(): number | null {
    return this.since;
  }

  /** The first error of the outage under way, null when there is none. */
  get firstError(): string | null {
    return this.error;
  }

  /** `count` attempts failed at `at` (on the rows named by `rows`, when rows are what failed). */
  failed(at: number, count: number, error: string, rows: readonly string[] = []): OutageReport | null {
    this.lastFailureAt = at;
    this.attempts += count;
    for (const row of rows) this.rows.add(row);
    if (this.since !== null) return null;
    this.since = at;
    this.error = error;
    return { kind: 'down', error };
  }

  /** A pass at `at` had no failure of this cause; `confirmed`: it showed that the cause works again. */
  succeeded(at: number, confirmed: boolean): OutageReport | null {
    if (this.since === null) return null;
    if (!confirmed && at - this.lastFailureAt < this.quietMs) return null;
    const report: OutageReport = {
      kind: 'up',
      downForMs: Math.max(0, at - this.since),
      failedAttempts: this.attempts,
      rows: this.rows.size,
    };
    this.since = null;
    this.error = null;
    this.attempts = 0;
    this.rows.clear();
    return report;
  }
}
