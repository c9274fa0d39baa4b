/**
 * The BabelQueue envelope core: codec, dead-letter helpers, errors.
 *
 * Decoding choices (each has unit tests): a leading byte order mark is refused (no SDK emits
 * one; JSON.parse and Python refuse it too); UTF-8 is checked strictly; a lone-surrogate escape
 * ("\uD800") is valid JSON grammar and is kept, and written back escaped; duplicate keys: the
 * last wins, as with JSON.parse; nesting deeper than 512 levels is an error, not a stack overflow.
 */
export {
  BabelNonRetriableError,
  BabelQueueError,
  InvalidEnvelopeError,
  SchemaVersionRejectedError,
  UnknownUrnError,
} from './errors.js';
// The errors of a request made with BabelPulsarClient.send() (docs/request-response.md).
export { RequestFailedError, RequestTimeoutError } from './request-errors.js';
export type { DeadLetterBlock, DecodeOptions, DecodeResult, Envelope, EnvelopeMeta, MakeOptions } from './types.js';
export { EnvelopeCodec, FORBIDDEN_KEY_POINTERS } from './codec.js';
export {
  DEAD_LETTER_LANG,
  DEAD_LETTER_TOPIC_PROPERTY,
  bareTopicName,
  deadLetterProperties,
  deadLetterRecord,
  errorName,
  type DeadLetterPropertiesInput,
  type DeadLetterReason,
  type DeadLetterRecordInput,
} from './dead-letter.js';
export { errorMessage } from './error-text.js';
