/** The longest wait before a failed row is tried again. */
export const OUTBOX_BACKOFF_CAP_MS = 5000;
/** The step the wait grows by per failed attempt. */
export const OUTBOX_BACKOFF_STEP_MS = 50;

/**
 * How long a row waits after a failed publish, given how many attempts failed before this one: grows linearly
 * with the attempts and is capped, so a broker that is down is not hammered and a row is never parked for long
 * (the same budget as the other BabelQueue SDKs' relays).
 */
export function outboxBackoffMs(priorAttempts: number): number {
  const attempts = Number.isInteger(priorAttempts) && priorAttempts > 0 ? priorAttempts : 0;
  return Math.min(OUTBOX_BACKOFF_STEP_MS * Math.max(1, attempts + 1), OUTBOX_BACKOFF_CAP_MS);
}
