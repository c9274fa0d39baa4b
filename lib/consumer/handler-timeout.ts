import { BabelQueueError } from '../envelope/index.js';

/** A handler did not settle within its time-out; counted as a failed attempt. */
export class HandlerTimeoutError extends BabelQueueError {
  readonly urn: string;
  readonly timeoutMs: number;

  constructor(urn: string, timeoutMs: number) {
    super(`handler for ${urn} did not settle within ${timeoutMs} ms (time-out, counted as a failed attempt)`);
    this.name = 'HandlerTimeoutError';
    this.urn = urn;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Waits for `work` at most `timeoutMs` (0 = no limit). On a time-out it rejects with HandlerTimeoutError and
 * hands the still-running work to `onOverdue`, so its owner can count and report it until it ends: a hung
 * handler must neither hold its message forever nor disappear from view.
 */
export function withHandlerTimeout(
  work: Promise<void>,
  urn: string,
  timeoutMs: number,
  onOverdue: (stillRunning: Promise<void>) => void,
): Promise<void> {
  if (!(timeoutMs > 0)) return work;
  return new Promise<void>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new HandlerTimeoutError(urn, timeoutMs));
      onOverdue(
        work.then(
          () => undefined,
          () => undefined,
        ),
      );
    }, timeoutMs);
    work.then(
      () => {
        if (timedOut) return;
        clearTimeout(timer);
        resolve();
      },
      (error: unknown) => {
        if (timedOut) return;
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}
