import { DEAD_LETTER_TOPIC_PROPERTY, EnvelopeCodec, type Envelope } from '../envelope/index.js';
import type { PulsarMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';

/**
 * What an operator sees of one dead-letter record, from its body's `dead_letter` block when it has one, else
 * from the `bq-dead-letter-*` properties (a poison record keeps its bytes, so only the properties describe it).
 */
export interface DeadLetterView {
  /** The DLQ message id, `(ledger,entry,partition,batchIndex)` on either client. */
  messageId: string;
  /** `meta.id` ('' when the record is not an envelope). */
  id: string;
  urn: string;
  /** `failed`, `unknown_urn`, `poison` (or whatever an other writer put there; '' when nothing). */
  reason: string;
  /** The counted attempt at which it was dead-lettered (null when unknown). */
  attempts: number | null;
  error: string | null;
  exception: string | null;
  /** The queue it came from as the record says (`dead_letter.original_queue`: the message's own `meta.queue`). */
  originalQueue: string;
  /** The topic it was consumed from, as this library records it (`bq-dead-letter-topic`); null when not recorded. */
  consumedTopic: string | null;
  /**
   * When it was dead-lettered, epoch ms: the record's value when it is a whole number of ms from 1970 up to
   * year 275760 (what a Date holds), else the DLQ publish time.
   */
  failedAt: number;
  /** `now - failedAt`, ms. */
  ageMs: number;
  /** The body as received (text; a poison body that is not UTF-8 shows replacement characters). */
  body: string;
  properties: Record<string, string>;
  /** Why the body is not a BabelQueue envelope; null when it is one. */
  invalid: string | null;
}

/** A record decoded once: the view, and the envelope when the body is one. */
export interface DecodedDeadLetter {
  view: DeadLetterView;
  envelope: Envelope | null;
  message: PulsarMessage;
}

const numberOrNull = (value: unknown): number | null => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};
/** The latest time a Date can hold, ms. */
const MAX_DATE_MS = 8.64e15;
const timeOrNull = (value: unknown): number | null => {
  const n = numberOrNull(value);
  return n !== null && Number.isInteger(n) && n >= 0 && n <= MAX_DATE_MS ? n : null;
};
const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const nonBlank = (value: string | undefined): string | null =>
  value !== undefined && value.trim() !== '' ? value.trim() : null;

export function decodeDeadLetter(message: PulsarMessage, now: number = Date.now()): DecodedDeadLetter {
  // A plain object: the raw native client returns an Array carrying the pairs as named members.
  const properties: Record<string, string> = { ...message.getProperties() };
  const data = message.getData();
  const decoded = EnvelopeCodec.decode(data);
  const invalid = decoded.error ?? EnvelopeCodec.rejection(decoded.envelope);
  const envelope = invalid === null ? (decoded.envelope as Envelope) : null;
  const block = envelope?.dead_letter;
  const failedAt =
    timeOrNull(block?.failed_at) ?? timeOrNull(properties['bq-dead-letter-failed-at']) ?? message.getPublishTimestamp();
  const view: DeadLetterView = {
    messageId: messageIdText(message.getMessageId()),
    id: typeof envelope?.meta.id === 'string' ? envelope.meta.id : '',
    urn: envelope ? EnvelopeCodec.urn(envelope) : (properties['bq-job'] ?? '').trim(),
    reason: stringOrNull(block?.reason) ?? properties['bq-dead-letter-reason'] ?? '',
    attempts: numberOrNull(block?.attempts) ?? numberOrNull(properties['bq-dead-letter-attempts']),
    error: stringOrNull(block?.error) ?? properties['bq-dead-letter-error'] ?? null,
    exception: stringOrNull(block?.exception) ?? null,
    originalQueue:
      stringOrNull(block?.original_queue) ??
      properties['bq-dead-letter-original-queue'] ??
      (typeof envelope?.meta.queue === 'string' ? envelope.meta.queue : ''),
    consumedTopic: nonBlank(properties[DEAD_LETTER_TOPIC_PROPERTY]),
    failedAt,
    ageMs: Math.max(0, now - failedAt),
    body: data.toString('utf8'),
    properties,
    invalid,
  };
  return { view, envelope, message };
}
