export { InvalidPayloadError, payloadViolations } from './payload-schema.js';
export type { PayloadSchema } from './payload-schema.js';
export { DecryptError, protect, sensitivePaths, unprotect, UnprotectedFieldError } from './gdpr.js';
export type { FieldCipher } from './gdpr.js';
export { AesGcmCipher, InvalidKeySizeError, MalformedCiphertextError } from './aes-gcm.js';
export type { CipherKeys, CipherKeySource } from './aes-gcm.js';
export { defineUrn, isUrnContract } from './urn-contract.js';
export type { PayloadOf, UrnContract } from './urn-contract.js';
