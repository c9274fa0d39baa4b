export { BabelQueueError, InvalidEnvelopeError, SchemaVersionRejectedError, UnknownUrnError } from './errors.js';
export type { DeadLetterBlock, DecodeOptions, DecodeResult, Envelope, EnvelopeMeta, MakeOptions } from './types.js';
export { EnvelopeCodec, FORBIDDEN_KEY_POINTERS } from './codec.js';
export {
  DEAD_LETTER_LANG,
  bareTopicName,
  deadLetterProperties,
  deadLetterRecord,
  errorMessage,
  errorName,
  type DeadLetterPropertiesInput,
  type DeadLetterReason,
  type DeadLetterRecordInput,
} from './dead-letter.js';
