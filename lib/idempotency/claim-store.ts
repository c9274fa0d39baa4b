import { describeValue } from '../describe-value.js';

/**
 * What a claim found: `claimed` (the caller holds the id until it commits, releases, or its lease ends), `held`
 * (another caller holds it now) or `done` (a caller committed it: the work is done).
 */
export type ClaimState = 'claimed' | 'held' | 'done';

/**
 * A store that locks a message id while its handler runs, without a transaction (the PHP SDK's ClaimingStore, the
 * Go SDK's Claim()): `claim` takes the id for the store's lease, `commit` marks it done, `release` makes it
 * claimable again. A claim whose lease ended is claimable again too, so a crashed holder does not block the id
 * for ever. `token` names the holder: `release` only frees the caller's own claim, never one taken after its lease
 * ended. Methods may be sync or async.
 */
export interface ClaimStore {
  /** How long a claim holds, ms: a handler that runs longer can be run a second time by another delivery. */
  readonly leaseMs: number;
  claim(id: string, token: string): ClaimState | Promise<ClaimState>;
  /** Marks the id done (it stays done for the store's retention), whoever holds it now. */
  commit(id: string, token: string): void | Promise<void>;
  /** Frees the id if `token` still holds it; a no-op otherwise. */
  release(id: string, token: string): void | Promise<void>;
}

/** True for a store with claim / commit / release (as opposed to an IdempotencyStore's seen / remember / forget). */
export function isClaimStore(store: unknown): store is ClaimStore {
  const candidate = store as Partial<ClaimStore> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.claim === 'function' &&
    typeof candidate.commit === 'function' &&
    typeof candidate.release === 'function' &&
    typeof candidate.leaseMs === 'number'
  );
}

export interface ClaimTimes {
  /** How long a claim holds, ms. Default 5 minutes: above the default handler time-out (60 s) with room. */
  leaseMs?: number;
  /** How long a committed id is remembered, ms. Default 7 days. */
  doneTtlMs?: number;
}

export const DEFAULT_LEASE_MS = 5 * 60_000;
export const DEFAULT_DONE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The lease and retention of a claim store, checked (whole, positive numbers of ms). */
export function claimTimes(options: ClaimTimes, store: string): Required<ClaimTimes> {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const doneTtlMs = options.doneTtlMs ?? DEFAULT_DONE_TTL_MS;
  for (const [name, value] of [
    ['leaseMs', leaseMs],
    ['doneTtlMs', doneTtlMs],
  ] as const) {
    if (!(Number.isInteger(value) && value > 0))
      throw new TypeError(`${store}: ${name} must be a positive whole number of ms, got ${describeValue(value)}`);
  }
  return { leaseMs, doneTtlMs };
}
