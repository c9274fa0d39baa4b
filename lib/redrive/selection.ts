import { DeadLetterUsageError } from './errors.js';
import type { DeadLetterView } from './dead-letter-view.js';

/** The reasons this library writes on dead-letter records; a selector naming another one is a typo. */
export const DEAD_LETTER_REASONS = ['failed', 'unknown_urn', 'poison'] as const;
export type SelectableReason = (typeof DEAD_LETTER_REASONS)[number];

/** Which dead-letter records a verb acts on; every given field must match (an empty selection picks all). */
export interface DeadLetterSelection {
  reason?: string;
  urn?: string;
  /** `meta.id` values. */
  ids?: readonly string[];
  /** DLQ message ids as printed, `(ledger,entry,partition,batchIndex)`. */
  messageIds?: readonly string[];
  /** Only records dead-lettered at least this long ago, ms. */
  olderThanMs?: number;
  /** Only records dead-lettered at most this long ago, ms. */
  newerThanMs?: number;
}

/** Throws DeadLetterUsageError for a selector that could only select nothing by mistake. */
export function checkSelection(selection: DeadLetterSelection): void {
  const { reason, urn, ids, messageIds, olderThanMs, newerThanMs } = selection;
  if (reason !== undefined && !(DEAD_LETTER_REASONS as readonly string[]).includes(reason.trim()))
    throw new DeadLetterUsageError(
      `unknown reason ${JSON.stringify(reason)}: use one of ${DEAD_LETTER_REASONS.join(', ')}`,
    );
  if (urn !== undefined && urn.trim() === '') throw new DeadLetterUsageError('the URN selector must not be blank');
  if (ids?.some((id) => id.trim() === '')) throw new DeadLetterUsageError('a meta.id selector must not be blank');
  if (messageIds?.some((id) => id.trim() === ''))
    throw new DeadLetterUsageError('a message id selector must not be blank');
  for (const [name, value] of [
    ['older-than', olderThanMs],
    ['newer-than', newerThanMs],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      throw new DeadLetterUsageError(`${name} must be a duration of 0 or more, got ${String(value)}`);
  }
}

export function isSelected(view: DeadLetterView, selection: DeadLetterSelection): boolean {
  if (selection.reason !== undefined && view.reason !== selection.reason.trim()) return false;
  if (selection.urn !== undefined && view.urn !== selection.urn.trim()) return false;
  if (selection.ids !== undefined && !selection.ids.some((id) => id.trim() === view.id)) return false;
  if (selection.messageIds !== undefined && !selection.messageIds.some((id) => id.trim() === view.messageId))
    return false;
  if (selection.olderThanMs !== undefined && view.ageMs < selection.olderThanMs) return false;
  if (selection.newerThanMs !== undefined && view.ageMs > selection.newerThanMs) return false;
  return true;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `15m`, `2h`, `7d`, `500ms` (a bare number is seconds) → ms; throws DeadLetterUsageError otherwise. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) throw new DeadLetterUsageError(`${JSON.stringify(text)} is not a duration such as 90s, 15m, 2h or 7d`);
  return Number(match[1]) * UNIT_MS[match[2] ?? 's']!;
}
