import { EnvelopeCodec } from '../envelope/index.js';
import type { OutboundCopy } from './decision-types.js';

export { isTooBig } from '../pulsar/client-errors.js';

/** Where the omitted body can still be found. */
export interface OmittedBody {
  /** Size of the original message's payload, bytes. */
  size: number;
  /** The original message id (the client's toString()), to read it back from the topic. */
  messageId: string;
}

export const BODY_OMITTED_PROPERTIES = {
  omitted: 'bq-dead-letter-body-omitted',
  size: 'bq-dead-letter-original-size',
  messageId: 'bq-dead-letter-original-message-id',
} as const;

function omittedProperties(original: OmittedBody): Record<string, string> {
  return {
    [BODY_OMITTED_PROPERTIES.omitted]: 'true',
    [BODY_OMITTED_PROPERTIES.size]: String(original.size),
    [BODY_OMITTED_PROPERTIES.messageId]: original.messageId,
  };
}

/**
 * The dead-letter record written when the full one is too big (pure). A failure record stays a valid
 * envelope: `job`, `trace_id`, `meta` and `attempts` kept, `data` emptied to `{}`, unknown root keys left
 * out, and the `dead_letter` block (additional keys are allowed there) says `body_omitted`, the original
 * size and message id. A poison record (which keeps the original bytes) is written with an empty payload.
 * The properties are the full record's plus the `bq-dead-letter-body-omitted` trio.
 */
export function bodyOmittedRecord(
  reason: 'failed' | 'unknown_urn' | 'poison',
  record: OutboundCopy,
  original: OmittedBody,
): OutboundCopy {
  const properties = { ...record.properties, ...omittedProperties(original) };
  if (reason === 'poison') return { data: Buffer.alloc(0), properties };
  const { envelope } = EnvelopeCodec.decode(record.data);
  const block = envelope.dead_letter as Record<string, unknown>;
  const slim = {
    job: envelope.job,
    trace_id: envelope.trace_id,
    data: {},
    meta: envelope.meta,
    attempts: envelope.attempts,
    dead_letter: {
      ...block,
      body_omitted: true,
      original_size: original.size,
      original_message_id: original.messageId,
    },
  };
  return { data: EnvelopeCodec.encodeToBuffer(slim), properties };
}

const KEPT_ROUTING_PROPERTIES = ['bq-job', 'bq-trace-id', 'bq-message-id', 'bq-attempts'];
const LONGEST_KEPT_VALUE = 1024;

/**
 * The last resort when even the body-omitted record is too big (huge `meta` or properties): an empty
 * payload with only the `bq-dead-letter-*` properties and the routing ids, each cut to 1 KiB (pure).
 */
export function bareRecord(record: OutboundCopy): OutboundCopy {
  const properties: Record<string, string> = {};
  for (const [key, value] of Object.entries(record.properties)) {
    if (key.startsWith('bq-dead-letter-') || KEPT_ROUTING_PROPERTIES.includes(key)) {
      properties[key] = value.length > LONGEST_KEPT_VALUE ? `${value.slice(0, LONGEST_KEPT_VALUE)}…` : value;
    }
  }
  return { data: Buffer.alloc(0), properties };
}
