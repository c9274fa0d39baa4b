import { BabelQueueError } from '../envelope/index.js';

/**
 * Why a subscription replay was not done: `usage` (a wrong option), `missing` (no such topic or subscription;
 * nothing was created), `unreachable` (the admin API did not answer), `refused` (it would skip messages the
 * subscription has not acknowledged yet, or the broker refused the reset).
 */
export type ReplayFailureKind = 'usage' | 'missing' | 'unreachable' | 'refused';

/** A replay that was not done, and why (`kind`: the CLI's exit code follows it). */
export class SubscriptionReplayError extends BabelQueueError {
  override readonly name = 'SubscriptionReplayError';
  constructor(
    /** Why the replay was not done. */
    readonly kind: ReplayFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
