import { quoted } from '../text/untrusted-text.js';
import type { IdempotencyStore } from './store.js';

/** What runOnce did: ran the handler, or skipped it as a duplicate. */
export type RunOnceOutcome = 'ran' | 'duplicate';

/**
 * Runs `handler` unless `id` was already handled (docs/contract.md#idempotency): a duplicate returns without running it (the
 * transport then acknowledges it); a failure leaves the id unmarked, so a retry or a redrive runs it again; an
 * empty id runs every time (fail open). Not a lock: two copies delivered at the same moment may both run.
 */
export async function runOnce(
  store: IdempotencyStore,
  id: unknown,
  handler: () => Promise<unknown>,
): Promise<RunOnceOutcome> {
  if (typeof id !== 'string' || id === '') {
    await handler();
    return 'ran';
  }
  if (await store.seen(id)) return 'duplicate';
  await handler();
  await store.remember(id);
  return 'ran';
}

/** The log line of a duplicate that was skipped; the URN and `meta.id` come from the message, so both are quoted. */
export function duplicateSkippedLine(urn: string, id: unknown, by: 'idempotency' | 'inbox' = 'idempotency'): string {
  return `skipped urn=${quoted(urn)} id=${quoted(id)}: already handled (${by})`;
}
