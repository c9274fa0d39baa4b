import { BabelQueueError } from '../envelope/index.js';
import { hasSensitiveFields, protect, unprotect, type FieldCipher } from './gdpr.js';
import { assertPayload, type PayloadSchema } from './payload-schema.js';

const NO_CIPHER_ERROR = new BabelQueueError(
  'the schema marks x-gdpr-sensitive fields but no cipher is configured (gdpr option)',
);

/** Stands in when no cipher is configured: a marked value that is present fails; an absent one is fine. */
const NO_CIPHER: FieldCipher = {
  encrypt: () => {
    throw NO_CIPHER_ERROR;
  },
  decrypt: () => {
    throw NO_CIPHER_ERROR;
  },
};

/**
 * What a handler receives as its payload: the marked fields decrypted, then the cleartext validated against the
 * URN's schema. A failed decryption throws DecryptError (retried, then dead-lettered); a payload that breaks the
 * schema throws InvalidPayloadError (dead-lettered at once). `data` itself is left as it arrived, so retry copies
 * and dead-letter records never carry decrypted values. No schema: `data` as is.
 */
export function handlerPayload(
  urn: string,
  data: Record<string, unknown>,
  schema: PayloadSchema | undefined,
  cipher: FieldCipher | undefined,
): Record<string, unknown> {
  if (schema === undefined) return data;
  // Without a cipher a marked value that is present fails (DecryptError, retried); an absent one is fine.
  const clear = hasSensitiveFields(schema) ? unprotect(data, schema, cipher ?? NO_CIPHER) : data;
  assertPayload(urn, schema, clear);
  return clear;
}

/**
 * What a publish sends as `data`: validated as cleartext against the schema, then the marked fields encrypted.
 * Throws before anything is sent: InvalidPayloadError, or a BabelQueueError when the schema marks fields
 * sensitive and there is no cipher (sensitive values are never sent in the clear by mistake).
 */
export function publishPayload<T extends object>(
  urn: string,
  data: T,
  schema: PayloadSchema | undefined,
  cipher: FieldCipher | undefined,
): T {
  if (schema === undefined) return data;
  assertPayload(urn, schema, data);
  if (!hasSensitiveFields(schema)) return data;
  try {
    return protect(data, schema, cipher ?? NO_CIPHER);
  } catch (error) {
    if (error !== NO_CIPHER_ERROR) throw error;
    throw new BabelQueueError(
      `the schema of ${urn} marks x-gdpr-sensitive fields but no cipher is configured (gdpr option): nothing was published`,
    );
  }
}
