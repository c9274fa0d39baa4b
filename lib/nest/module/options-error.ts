import { BabelQueueError } from '../../envelope/index.js';

/** The error every invalid module option raises: it names the option and what is allowed. */
export class BabelQueueOptionsError extends BabelQueueError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Invalid BabelQueueModule options: ${message}`, options);
    this.name = 'BabelQueueOptionsError';
  }
}
