import { BQ } from './binding.js';

/** The value a redrive with `bypass` stamps on `bq-replay-bypass` (docs/redrive.md). */
export const REPLAY_BYPASS_VALUE = '1';

/**
 * True when the message was re-published by a redrive run with `bypass` set: the `bq-replay-bypass` property is
 * present and non-empty. A handler uses it to skip external side effects (emails, charges) that already ran.
 */
export function isReplay(properties: Readonly<Record<string, string>> | undefined): boolean {
  const value = properties?.[BQ.replayBypass];
  return typeof value === 'string' && value !== '';
}
