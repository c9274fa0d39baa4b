// Writing the reply of a request (docs/contract.md#requests-and-replies); the settlement decides when.
import type { Envelope } from '../envelope/index.js';
import type { PulsarProducerMessage } from '../pulsar/client-types.js';
import { asError } from './hooks.js';
import { replyMessage, type ReplyBody, type ReplyRequest } from '../pulsar/reply-binding.js';
import type { ProcessorContext } from './processor-context.js';

/** The reply message, continuing the request's trace. */
export function replyOf(
  urn: string,
  request: ReplyRequest,
  body: ReplyBody,
  envelope: Envelope | Record<string, never>,
): PulsarProducerMessage {
  const traceId = (envelope as { trace_id?: unknown }).trace_id;
  return replyMessage(urn, request, body, typeof traceId === 'string' && traceId !== '' ? traceId : undefined);
}

/** Sends a reply; the error that says why when it could not be written, else null. */
export async function sendReply(
  ctx: ProcessorContext,
  request: ReplyRequest,
  reply: PulsarProducerMessage,
): Promise<Error | null> {
  try {
    await ctx.reply!(request.to, reply);
    return null;
  } catch (error) {
    return new Error(`could not write the reply to ${request.to}: ${asError(error).message}`, { cause: error });
  }
}
