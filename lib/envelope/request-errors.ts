import { BabelQueueError } from './errors.js';

/**
 * A request that ended without an answer on the handler's side (dead-lettered after its attempts, or at once for a
 * failure that cannot succeed on retry). `message` is the handler's error text and `errorClass` its class, as the
 * dead-letter record names them.
 */
export class RequestFailedError extends BabelQueueError {
  constructor(
    message: string,
    /** The class (`name`) of the handler's error; null when the failure had none. */
    readonly errorClass: string | null,
    /** The request's URN. */
    readonly urn: string,
    /** The request's `meta.id` (its dead-letter record has the same id). */
    readonly messageId: string,
  ) {
    super(message);
    this.name = 'RequestFailedError';
  }
}

/** No reply came within the request's time-out. The request may still be handled; its late reply is dropped. */
export class RequestTimeoutError extends BabelQueueError {
  constructor(
    readonly urn: string,
    readonly messageId: string,
    readonly timeoutMs: number,
  ) {
    super(
      `no reply to ${urn} (message ${messageId}) within ${timeoutMs} ms: is a handler for it running, and was the ` +
        'request dead-lettered without a reply? (requestTimeoutMs / send(..., { timeoutMs }) sets the wait)',
    );
    this.name = 'RequestTimeoutError';
  }
}
