// The `error` event of BabelPulsarClient: a publish the broker did not accept, raised once however many paths see
// it (the publish itself, its time-out, emit()'s own report). Kept apart so that the client only says when a
// failure is raised, not how it is kept from being raised twice.
import type { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { BabelQueueError } from '../../envelope/index.js';

/** Events of `client.on(...)`. */
export type BabelClientEvents = {
  /** A publish the broker did not accept (the publish call rejects with the same error). */
  error: (error: Error) => void;
};

/** The listeners of a client's events, and the failures already raised to them. */
export class ClientEvents {
  private readonly events = new EventEmitter();
  /** Failures already raised on the `error` event (emit() must not raise one twice). */
  private readonly reported = new WeakSet<object>();

  constructor() {
    this.events.on('error', () => undefined); // an 'error' without listeners must not throw
  }

  on<K extends keyof BabelClientEvents>(event: K, callback: BabelClientEvents[K]): void {
    this.events.on(event, callback as (...args: unknown[]) => void);
  }

  /** Raises `failure` on the `error` event, unless it was raised already. */
  raise(failure: Error): void {
    if (this.reported.has(failure)) return;
    this.reported.add(failure);
    this.events.emit('error', failure);
  }

  /** An emit() that failed: nobody may subscribe to its Observable, so the failure is logged once and raised. */
  emitFailed(logger: Logger, pattern: unknown, error: unknown): void {
    const failure = error instanceof Error ? error : new BabelQueueError(String(error));
    logger.error(`emit(${JSON.stringify(pattern) ?? String(pattern)}) failed: ${failure.message}`);
    this.raise(failure);
  }
}
