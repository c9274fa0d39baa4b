import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { BabelQueueError } from '../envelope/index.js';
import type { FieldCipher } from './gdpr.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM: Record<number, 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm'> = {
  16: 'aes-128-gcm',
  24: 'aes-192-gcm',
  32: 'aes-256-gcm',
};

export class InvalidKeySizeError extends BabelQueueError {
  constructor(size: number) {
    super(`an AES-GCM key is 16, 24 or 32 bytes (AES-128/192/256), got ${size}`);
    this.name = 'InvalidKeySizeError';
  }
}

export { MalformedCiphertextError } from './malformed-ciphertext.js';
import { MalformedCiphertextError } from './malformed-ciphertext.js';

/** The keys in force: `current` encrypts; `current` then each of `previous` is tried to decrypt. */
export interface CipherKeys {
  current: Buffer;
  previous?: readonly Buffer[];
}

/** A key, the keys, or a function asked on every use (so a rotated key is picked up without a restart). */
export type CipherKeySource = Buffer | CipherKeys | (() => Buffer | CipherKeys);

function checkKey(key: unknown): Buffer {
  if (!Buffer.isBuffer(key)) throw new BabelQueueError('an AES-GCM key must be a Buffer of 16, 24 or 32 bytes');
  if (!ALGORITHM[key.length]) throw new InvalidKeySizeError(key.length);
  return key;
}

/**
 * The reference field cipher of the BabelQueue SDKs: AES-GCM with a random 12-byte IV and a 16-byte tag, written
 * as base64(iv ‖ ciphertext ‖ tag), so a value one SDK encrypts another decrypts with the same key. Rotation:
 * give `{ current, previous }` (or a function returning it); values written under a previous key still open.
 */
export class AesGcmCipher implements FieldCipher {
  constructor(private readonly keys: CipherKeySource) {
    this.resolve(); // a bad key fails at construction, not on the first message
  }

  encrypt(plaintext: Buffer): string {
    const key = this.resolve().current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM[key.length]!, key, iv, { authTagLength: TAG_BYTES });
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64');
  }

  decrypt(ciphertext: string): Buffer {
    const raw = Buffer.from(ciphertext, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES || raw.toString('base64') !== ciphertext.replace(/\s+/g, '')) {
      throw new MalformedCiphertextError('not an AES-GCM field value: expected base64(iv ‖ ciphertext ‖ tag)');
    }
    const iv = raw.subarray(0, IV_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    const sealed = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
    const { current, previous = [] } = this.resolve();
    for (const key of [current, ...previous]) {
      try {
        const decipher = createDecipheriv(ALGORITHM[key.length]!, key, iv, { authTagLength: TAG_BYTES });
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(sealed), decipher.final()]);
      } catch {
        // authentication failed under this key: try the next one
      }
    }
    throw new BabelQueueError('the value does not authenticate under any key in force (wrong key or tampered)');
  }

  private resolve(): Required<CipherKeys> {
    const source = typeof this.keys === 'function' ? this.keys() : this.keys;
    const keys: CipherKeys = Buffer.isBuffer(source) ? { current: source } : source;
    if (!keys || typeof keys !== 'object')
      throw new BabelQueueError('AesGcmCipher needs a key or { current, previous }');
    return { current: checkKey(keys.current), previous: (keys.previous ?? []).map(checkKey) };
  }
}
