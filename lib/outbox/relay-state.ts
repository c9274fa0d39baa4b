// What a relay reports: the result of a pass or a drain, and its state for describe() and the health check.

export interface OutboxRelayResult {
  /** Rows the broker stored and that are now marked published. */
  published: number;
  /** Rows whose publish failed: still pending, attempts + 1, due again after the backoff. */
  failed: number;
  /** Rows parked by this pass: their own fault, tried `parkAfterAttempts` times; no longer tried. */
  parked: number;
}

/** What describe() reports (and the module's health check shows under `outbox`). */
export interface OutboxRelayState {
  /** True between start() and stop(). */
  running: boolean;
  /** Since when publishes fail because of the broker (epoch ms); null while they do not. */
  brokerFailingSince: number | null;
  /** Since when passes fail because of the database (epoch ms); null while they do not. */
  databaseFailingSince: number | null;
  /** The first error of the outage under way (broker first), null when there is none. */
  lastError: string | null;
  /** Counted since this relay was created. */
  published: number;
  failed: number;
  parked: number;
  /** False when the table has no `parked_at` column yet (rows that would be parked are retried); null: not known yet. */
  parkingAvailable: boolean | null;
}
