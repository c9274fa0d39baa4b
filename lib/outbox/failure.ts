import { BabelQueueError } from '../envelope/index.js';
import { isNoSuchTopic, isTooBig } from '../pulsar/client-errors.js';
import { outboxBackoffMs } from './backoff.js';

/** Raised by the relay's own checks of a row (its body, its topic): trying the same row again cannot help. */
export class OutboxRowError extends BabelQueueError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboxRowError';
  }
}

/**
 * Whose fault a failed publish is. `row`: the row itself (not an envelope, a topic that cannot exist, too big
 * for the broker): the same bytes to the same topic fail again. `broker`: anything else (unreachable, timed out,
 * refused for a reason of the deployment): not the row's fault, so it never counts towards parking.
 */
export type OutboxFailureCause = 'row' | 'broker';

export function outboxFailureCause(error: unknown): OutboxFailureCause {
  return error instanceof OutboxRowError || isTooBig(error) || isNoSuchTopic(error) ? 'row' : 'broker';
}

export type OutboxFailureDecision = { park: true } | { park: false; retryInMs: number };

/**
 * What becomes of a row whose publish failed, given the attempts that failed before this one: a row fault on
 * the `parkAfterAttempts`-th attempt (or later) parks it; anything else waits for the backoff and is tried again.
 */
export function decideFailedRow(
  cause: OutboxFailureCause,
  priorAttempts: number,
  parkAfterAttempts: number,
): OutboxFailureDecision {
  if (cause === 'row' && priorAttempts + 1 >= parkAfterAttempts) return { park: true };
  return { park: false, retryInMs: outboxBackoffMs(priorAttempts) };
}
