/**
 * Request/response on the BabelQueue binding (docs/contract.md#requests-and-replies). A request is an ordinary
 * envelope with two more properties; a reply is an envelope of the request's URN on the caller's reply topic.
 * Both are additive: a consumer that ignores them handles a request as any other message.
 */
import { EnvelopeCodec, errorMessage, errorName } from '../envelope/index.js';
import { lossyDataProblem } from '../envelope/producer-checks.js';
import { isBlankProperty, pulsarProperties } from './binding.js';
import type { PulsarProducerMessage } from './client-types.js';
import { parseTopic } from './topic-name.js';

/** The properties of a request and of its reply. */
export const BQ_REPLY = {
  /** On a request: the full name of the topic the reply goes to. */
  replyTo: 'bq-reply-to',
  /** On a request and on its reply: the id that pairs them (the caller's choice, opaque to the handler). */
  correlationId: 'bq-correlation-id',
  /** On a reply: `ok` (the handler returned) or `error` (the request ended without an answer). */
  status: 'bq-reply-status',
} as const;

export type ReplyStatus = 'ok' | 'error';

/** Where a request wants its reply; null for a message that asks for none (then it is handled exactly as before). */
export interface ReplyRequest {
  to: string;
  correlationId: string;
}

/**
 * The reply a request asks for, if it asks for one: both properties present and not blank, and `bq-reply-to` a
 * topic name (a message naming no topic there is handled as one that asks for no reply).
 */
export function replyRequestOf(properties: Record<string, string> | undefined): ReplyRequest | null {
  const to = properties?.[BQ_REPLY.replyTo];
  const correlationId = properties?.[BQ_REPLY.correlationId];
  if (isBlankProperty(to) || isBlankProperty(correlationId)) return null;
  try {
    return { to: parseTopic(to!.trim()).full, correlationId: correlationId! };
  } catch {
    return null;
  }
}

/** What a reply says: the handler's value, or why the request ended without one. */
export type ReplyBody =
  { status: 'ok'; result?: unknown } | { status: 'error'; error: { class: string | null; message: string } };

/** The reply body of a failure: the handler's error text and class, as its dead-letter record names them. */
export function errorReply(error: unknown): ReplyBody {
  return { status: 'error', error: { class: errorName(error), message: errorMessage(error) ?? '' } };
}

/**
 * The reply message to a request: an envelope of the request's URN whose data is `{ result }` (`{}` for a handler
 * that returned nothing) or `{ error: { class, message } }`, with the contract's properties plus the correlation id
 * and the status. A result JSON cannot carry unchanged (a function, NaN, a cycle…) becomes an error reply that says so.
 */
export function replyMessage(
  urn: string,
  request: ReplyRequest,
  body: ReplyBody,
  traceId?: string,
): PulsarProducerMessage {
  let reply = body;
  if (reply.status === 'ok' && reply.result !== undefined) {
    const problem = lossyDataProblem({ result: reply.result });
    if (problem !== null)
      reply = {
        status: 'error',
        error: {
          class: 'ReplyEncodingError',
          message: `the handler's return value cannot be sent as JSON: ${problem}`,
        },
      };
  }
  const data =
    reply.status === 'error' ? { error: reply.error } : reply.result === undefined ? {} : { result: reply.result };
  const envelope = EnvelopeCodec.make(urn, data, {
    queue: request.to.slice(request.to.lastIndexOf('/') + 1),
    ...(traceId !== undefined && { traceId }),
  });
  return {
    data: EnvelopeCodec.encodeToBuffer(envelope),
    properties: {
      ...pulsarProperties(envelope),
      [BQ_REPLY.correlationId]: request.correlationId,
      [BQ_REPLY.status]: reply.status,
    },
  };
}

/** A reply as the caller reads it; null when the message is not a reply (no correlation id, or unreadable). */
export function readReply(
  properties: Record<string, string>,
  payload: Buffer,
): { correlationId: string; body: ReplyBody } | null {
  const correlationId = properties[BQ_REPLY.correlationId];
  if (isBlankProperty(correlationId)) return null;
  let data: unknown;
  try {
    data = (JSON.parse(payload.toString('utf8')) as { data?: unknown } | null)?.data;
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null) return null;
  const fields = data as { result?: unknown; error?: unknown };
  const failed = properties[BQ_REPLY.status] === 'error' || ('error' in fields && !('result' in fields));
  if (failed) {
    const error = (typeof fields.error === 'object' && fields.error !== null ? fields.error : {}) as {
      class?: unknown;
      message?: unknown;
    };
    return {
      correlationId: correlationId!,
      body: {
        status: 'error',
        error: {
          class: typeof error.class === 'string' ? error.class : null,
          message: typeof error.message === 'string' ? error.message : '',
        },
      },
    };
  }
  return { correlationId: correlationId!, body: { status: 'ok', result: fields.result } };
}
