import type { PulsarWebSocketError } from './errors.js';

interface UnsubscribeWaiter {
  resolve(): void;
  reject(err: PulsarWebSocketError): void;
  timer: NodeJS.Timeout;
}

/**
 * A consumer's unsubscribe in flight, if any: the broker answers nothing to it, so it is settled by the answer to a
 * frame sent after it, by a dropped socket, by close(), or by its time-out.
 */
export class UnsubscribeWait {
  private waiter: UnsubscribeWaiter | undefined;

  /** Runs `send` and waits until resolve() or reject(); rejects with `timeoutError()` after `timeoutMs`. */
  wait(timeoutMs: number, timeoutError: () => PulsarWebSocketError, send: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(timeoutError());
      }, timeoutMs);
      timer.unref();
      this.waiter = { resolve, reject, timer };
      send();
    });
  }

  /** Settles the unsubscribe in flight as done; a no-op when none is. */
  resolve(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
  }

  /** Settles the unsubscribe in flight as failed with `error()`; a no-op when none is. */
  reject(error: () => PulsarWebSocketError): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.reject(error());
    }
  }
}
