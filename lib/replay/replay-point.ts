import { SubscriptionReplayError } from './errors.js';

/** A message id as the admin API takes it (`batchIndex` is not used: a reset goes to a whole entry). */
export interface AdminMessageId {
  ledgerId: number;
  entryId: number;
  partitionIndex: number;
}

/** Where a replay starts: the first message published at or after `since` (epoch ms), or a message id. */
export type ReplayPoint = { since: number } | { messageId: AdminMessageId; text: string };

const ID_FORMS = '(ledger,entry,partition,batch) as the logs and the CLI print it, or ledger:entry[:partition[:batch]]';

/**
 * A message id in the text the library prints (`(12,3,-1,-1)`, see messageIdText) or Pulsar's `12:3:-1`
 * (pure). Each part a whole number; the ledger and entry not negative.
 */
export function parseMessageId(text: string): AdminMessageId {
  const trimmed = text.trim();
  const inner = /^\((.*)\)$/.exec(trimmed)?.[1] ?? trimmed;
  const parts = inner.split(inner.includes(',') ? ',' : ':').map((part) => part.trim());
  const numbers = parts.map((part) => (/^-?[0-9]+$/.test(part) ? Number(part) : NaN));
  const [ledgerId, entryId, partitionIndex = -1] = numbers;
  if (
    parts.length < 2 ||
    parts.length > 4 ||
    numbers.some((n) => !Number.isSafeInteger(n)) ||
    ledgerId! < 0 ||
    entryId! < 0 ||
    partitionIndex < -1
  )
    throw new SubscriptionReplayError('usage', `${JSON.stringify(text)} is not a message id: use ${ID_FORMS}`);
  return { ledgerId: ledgerId!, entryId: entryId!, partitionIndex };
}

/** The point of a replay from its options: exactly one of `since` and `messageId` (pure but for `now`). */
export function replayPointOf(
  options: { since?: Date | number | undefined; messageId?: string | undefined },
  now: number,
): ReplayPoint {
  const { since, messageId } = options;
  if ((since === undefined) === (messageId === undefined))
    throw new SubscriptionReplayError('usage', 'a replay needs exactly one of since (a time) and messageId');
  if (messageId !== undefined) {
    if (typeof messageId !== 'string')
      throw new SubscriptionReplayError('usage', `messageId must be a string: ${ID_FORMS}`);
    return { messageId: parseMessageId(messageId), text: messageId.trim() };
  }
  const at = since instanceof Date ? since.getTime() : since;
  if (typeof at !== 'number' || !Number.isFinite(at) || at < 0)
    throw new SubscriptionReplayError('usage', 'since must be a Date or epoch milliseconds');
  if (at > now) throw new SubscriptionReplayError('usage', `since ${new Date(at).toISOString()} is in the future`);
  return { since: Math.floor(at) };
}

/** `since 2026-12-02T00:40:00.000Z` or `message (12,3,-1)`, for the result and the CLI. */
export function describePoint(point: ReplayPoint): string {
  return 'since' in point ? `since ${new Date(point.since).toISOString()}` : `message ${point.text}`;
}
