import { randomUUID } from 'node:crypto';
import { BabelQueueError } from '../envelope/index.js';
import type { ClaimStore } from './claim-store.js';
import type { RunOnceOutcome } from './run-once.js';

/** A copy whose id another delivery held for longer than the lease: it is retried as any failure. */
export class ClaimHeldError extends BabelQueueError {
  constructor(id: string, waitedMs: number) {
    super(`message id ${JSON.stringify(id)} is still claimed by another delivery after ${waitedMs} ms; retried`);
    this.name = 'ClaimHeldError';
  }
}

export interface RunClaimedOptions {
  /** Asked once the handler returned: false (it asked for a retry or a dead letter) releases instead of committing. */
  handled?: () => boolean;
  /** Waits between two claims of a held id; tests pass their own. */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const FIRST_POLL_MS = 10;
const LONGEST_POLL_MS = 250;

/**
 * Runs `handler` under a claim on `id`: `done` skips it (duplicate); `held` waits and claims again until the holder
 * commits (then skips), releases or lets its lease end (then runs), at most a lease and a poll long (then a
 * ClaimHeldError, retried as any failure). A handler that succeeds commits the id; one that fails releases it, so
 * its retry runs. An empty id runs every time (fail open), as runOnce does.
 */
export async function runClaimed(
  store: ClaimStore,
  id: unknown,
  handler: () => Promise<unknown>,
  options: RunClaimedOptions = {},
): Promise<RunOnceOutcome> {
  if (typeof id !== 'string' || id === '') {
    await handler();
    return 'ran';
  }
  const sleep = options.sleep ?? realSleep;
  const token = randomUUID();
  let waited = 0;
  let pause = FIRST_POLL_MS;
  for (;;) {
    const state = await store.claim(id, token);
    if (state === 'done') return 'duplicate';
    if (state === 'claimed') break;
    if (waited > store.leaseMs) throw new ClaimHeldError(id, waited);
    await sleep(pause);
    waited += pause;
    pause = Math.min(pause * 2, LONGEST_POLL_MS);
  }
  try {
    await handler();
  } catch (error) {
    // The handler's failure is what the settlement must see; a release that fails lets the lease free the id.
    await Promise.resolve()
      .then(() => store.release(id, token))
      .catch(() => undefined);
    throw error;
  }
  if (options.handled?.() === false) await store.release(id, token);
  else await store.commit(id, token);
  return 'ran';
}
