/**
 * What a failed client call means, whichever client raised it. The WebSocket client's errors carry a `code`
 * (PulsarWebSocketErrorCode), Node's network errors an errno `code`; the native addon's errors carry neither, only
 * a message naming its result (`Failed to send message: MessageTooBig`). This module is the one place that reads
 * those messages: everything else asks the predicates below.
 */
import { errorText } from '../envelope/error-text.js';

/** The native addon's result names in a message, and the WebSocket service's refusal texts, by meaning. */
const NATIVE_TEXT = {
  tooBig: /MessageTooBig|message too big|too large/i,
  notAuthorized: /AuthorizationError|NotAllowed/,
  refusedUpgrade: /not authori[sz]ed|authorization/i,
  unreachable:
    /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|ConnectError|Connection ?refused|fetch failed|TimeOut|timed out/i,
  subscriptionBusy: /busy|exclusive/i,
  noSuchTopic: /\b(TopicNotFound|InvalidTopicName)\b/,
  missingTopicText: /\b(namespace|topic|tenant)\b[^.]*\b(not found|does not exist)\b/i,
  neverStored:
    /\b(MessageTooBig|AlreadyClosed|InvalidArgument|InvalidTopic|InvalidMessage|SendError|ProducerQueueIsFull|ProducerBlockedQuota\w*|TopicTerminated)\b/,
} as const;

type Failure = { code?: unknown; status?: unknown; brokerMessage?: unknown; message?: unknown; cause?: unknown };

const codeOf = (error: unknown): string | undefined => {
  const code = typeof error === 'object' && error !== null ? (error as Failure).code : undefined;
  return typeof code === 'string' ? code : undefined;
};

/** A write the broker or client refused for its size: permanent, the same bytes are refused every time. */
export function isTooBig(error: unknown): boolean {
  return codeOf(error) === 'MessageTooBig' || NATIVE_TEXT.tooBig.test(errorText(error));
}

/**
 * A producer creation refused because the role may not produce there: the native AuthorizationError, or the
 * WebSocket service's refused upgrade (401/403) whose broker text says the role is not authorized. A wrong or
 * expired token (authentication) is not this.
 */
export function isNotAuthorized(error: unknown): boolean {
  const candidate = error as Failure | null;
  if (candidate === null || typeof candidate !== 'object') return false;
  if (candidate.code === 'HandshakeRejected') {
    const text = `${String(candidate.brokerMessage ?? '')} ${String(candidate.message ?? '')}`;
    return (candidate.status === 401 || candidate.status === 403) && NATIVE_TEXT.refusedUpgrade.test(text);
  }
  return typeof candidate.message === 'string' && NATIVE_TEXT.notAuthorized.test(candidate.message);
}

/**
 * A producer the broker refuses because the topic cannot be there: the native TopicNotFound (its tenant or
 * namespace does not exist, or topics are not created on demand there) or InvalidTopicName, and the WebSocket
 * service's 404 on the producer upgrade whose broker text says so (`Namespace not found`, `Topic not found`). Publishing the same message to
 * the same topic again fails the same way until someone creates it.
 */
export function isNoSuchTopic(error: unknown): boolean {
  const candidate = error as Failure | null;
  if (candidate === null || typeof candidate !== 'object') return false;
  // A bare 404 (a web server without the WebSocket service, a wrong path) is the deployment's, not the topic's.
  if (candidate.code === 'HandshakeRejected') {
    return candidate.status === 404 && NATIVE_TEXT.missingTopicText.test(String(candidate.brokerMessage ?? ''));
  }
  return NATIVE_TEXT.noSuchTopic.test(errorText(error));
}

/** The broker could not be reached, on either client or from fetch (the cause is read too). */
export function isUnreachable(error: unknown): boolean {
  const text = `${String(error)} ${String((error as Failure | null)?.cause ?? '')}`;
  return NATIVE_TEXT.unreachable.test(text);
}

/** A subscription held by another consumer right now (an Exclusive one a tool holds): it exists. */
export function isSubscriptionBusy(error: unknown): boolean {
  return NATIVE_TEXT.subscriptionBusy.test(String(error));
}

/**
 * Whether a failed send may still have been stored by the broker. Only failures known to happen before or
 * instead of storing say no; anything else (a lost connection, a time-out, an unknown error) may have been stored.
 */
export function mayHaveBeenStored(error: unknown): boolean {
  return !NATIVE_TEXT.neverStored.test(`${codeOf(error) ?? ''} ${errorText(error)}`);
}
