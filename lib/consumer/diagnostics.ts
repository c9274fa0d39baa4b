import { errorMessage, errorName } from '../envelope/index.js';
import type { Settlement } from './decision-types.js';
import { quoted } from '../text/untrusted-text.js';

/** What became of a failed delivery, as the failure line reports it. */
export type FailureOutcome =
  | { kind: 'retry'; delayMs: number; inPlace?: boolean }
  | { kind: 'nack' }
  | { kind: 'dead-lettered'; nonRetriable: boolean }
  | { kind: 'dropped'; nonRetriable: boolean }
  /** Failed for good under `onExhausted: 'block-key'`: kept unacknowledged, its key waits for an unblock. */
  | { kind: 'blocked' }
  /** The retry copy or dead-letter record could not be written; the original comes back (docs/contract.md#settlement). */
  | { kind: 'not-written' };

export interface FailureFacts {
  /** Null for a poison message, whose URN could not be read. */
  urn: string | null;
  messageId: string;
  topic: string;
  /** The counted attempt (this delivery included). */
  attempt: number;
  maxAttempts: number;
  /** What failed: the handler's error, the unknown URN, or why the body is poison. */
  error: unknown;
  outcome: FailureOutcome;
}

export interface DeadLetterFacts {
  urn: string | null;
  messageId: string;
  topic: string;
  deadLetterTopic: string;
  reason: 'failed' | 'unknown_urn' | 'poison';
  attempt: number;
}

/** A compile-time check that a switch handled every kind: adding a kind without its case fails to build. */
export function unreachable(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}

/**
 * What the failure line reports for a settlement that was carried out (pure): `written` is false when the retry
 * copy or dead-letter record could not be written. An acknowledgement of a failure is a drop.
 */
export function failureOutcomeOf(
  settlement: Settlement,
  written: boolean | undefined,
  attempt: number,
  maxAttempts: number,
): FailureOutcome {
  if (written === false) return { kind: 'not-written' };
  switch (settlement.action) {
    case 'retry':
      return { kind: 'retry', delayMs: settlement.delayMs };
    case 'retry-in-place':
      return { kind: 'retry', delayMs: settlement.delayMs, inPlace: true };
    case 'nack':
      return { kind: 'nack' };
    case 'dead-letter':
      return { kind: 'dead-lettered', nonRetriable: settlement.nonRetriable === true };
    case 'drop':
    case 'ack':
      return { kind: 'dropped', nonRetriable: attempt < maxAttempts };
    default:
      return unreachable(settlement);
  }
}

/** A failure that will be tried again is a warning; one that ends the message's life (or is stuck) an error. */
export function failureLevel(outcome: FailureOutcome): 'warn' | 'error' {
  switch (outcome.kind) {
    case 'retry':
    case 'nack':
    case 'dropped':
      return 'warn';
    case 'dead-lettered':
    case 'not-written':
    case 'blocked':
      return 'error';
    default:
      return unreachable(outcome);
  }
}

/** `12 s`, `1.5 s`, `250 ms`: short and exact enough to compare with the configured policy. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.round(ms / 100) / 10}s`;
}

function describeOutcome(outcome: FailureOutcome): string {
  switch (outcome.kind) {
    case 'retry': {
      const when = outcome.delayMs > 0 ? `retry in ${duration(outcome.delayMs)}` : 'retry now';
      return outcome.inPlace === true ? `${when} (in place)` : when;
    }
    case 'nack':
      return 'retry by negative acknowledgement';
    case 'dead-lettered':
      return outcome.nonRetriable ? 'dead-lettered (not retriable)' : 'dead-lettered';
    case 'dropped':
      return outcome.nonRetriable ? 'dropped (not retriable, no dead-letter topic)' : 'dropped (no dead-letter topic)';
    case 'blocked':
      return 'key blocked until unblocked (onExhausted block-key)';
    case 'not-written':
      return 'left for redelivery (the replacement could not be written)';
    default:
      return unreachable(outcome);
  }
}

/** One of this library's own values inside key=value: bare when it is plain, else quoted. */
function field(value: string): string {
  return /^[\w:.,()/@+-]+$/.test(value) ? value : quoted(value);
}

/** A value the message carries (its URN, a handler's error): always quoted, control characters escaped. */
const fromMessage = (value: string | null): string => (value === null ? '(unreadable)' : quoted(value));

/**
 * One line per failed delivery (pure), e.g.
 * `message failed: urn="urn:orders:created" id=12:3:-1:0 topic=orders attempt=1/3 outcome="retry in 2s" error="TypeError: boom"`.
 * Grep-able keys, the full cause last.
 */
export function failureLine(facts: FailureFacts): string {
  const cause = `${errorName(facts.error) ?? 'Error'}: ${errorMessage(facts.error) ?? ''}`;
  return [
    'message failed:',
    `urn=${fromMessage(facts.urn ?? null)}`,
    `id=${field(facts.messageId)}`,
    `topic=${field(facts.topic)}`,
    `attempt=${facts.attempt}/${facts.maxAttempts}`,
    `outcome=${field(describeOutcome(facts.outcome))}`,
    `error=${quoted(cause)}`,
  ].join(' ');
}

/** One line per record written to the dead-letter topic (pure). */
export function deadLetterLine(facts: DeadLetterFacts): string {
  return [
    'dead-lettered:',
    `urn=${fromMessage(facts.urn ?? null)}`,
    `id=${field(facts.messageId)}`,
    `topic=${field(facts.topic)}`,
    `to=${field(facts.deadLetterTopic)}`,
    `reason=${facts.reason}`,
    `attempt=${facts.attempt}`,
  ].join(' ');
}
