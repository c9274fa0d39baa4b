import { BabelQueueError } from '../envelope/index.js';

/**
 * A field value that is no ciphertext of the cipher (not its encoding, too short). A FieldCipher of one's own
 * throws it too, so that such a value is refused at once (UnprotectedFieldError) instead of retried.
 */
export class MalformedCiphertextError extends BabelQueueError {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedCiphertextError';
  }
}
