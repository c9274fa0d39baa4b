/** A delivery's own log line (its failure, or its dead-letter record), before it is written to the log. */
export interface OutcomeLine {
  level: 'warn' | 'error';
  /** The line as the log would show it (the stack appended when `logStackTraces` asks for it). */
  text: string;
  /** The delivery's `bq-message-id`, which every copy of a message shares; empty when it has none. */
  babelMessageId: string;
}

/** Takes a line (returns true) so that it is not logged, or leaves it to the log (returns false). */
export type OutcomeLineTap = (line: OutcomeLine) => boolean;

/**
 * Listeners that may take a delivery's outcome lines instead of the log: the testing kit takes those of the
 * messages it published, whose outcomes the test asserts, so a passing test prints nothing for them.
 */
export class OutcomeLineTaps {
  private readonly taps = new Set<OutcomeLineTap>();

  /** Adds a tap; the returned function removes it. */
  add(tap: OutcomeLineTap): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }

  /** True when a tap took the line. */
  take(line: OutcomeLine): boolean {
    for (const tap of this.taps) if (tap(line)) return true;
    return false;
  }
}

/**
 * The server's taps, under a key the testing kit knows and the public API does not show (a registered symbol: the
 * ESM and CommonJS builds of the package agree on it).
 */
export const OUTCOME_LINE_TAPS = Symbol.for('babelqueue.outcomeLineTaps');

/** Something that carries outcome-line taps (the BabelPulsarServer). */
export interface HasOutcomeLineTaps {
  readonly [OUTCOME_LINE_TAPS]: OutcomeLineTaps;
}

export function outcomeLineTapsOf(value: unknown): OutcomeLineTaps | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const taps = (value as Partial<HasOutcomeLineTaps>)[OUTCOME_LINE_TAPS];
  return typeof taps?.add === 'function' ? taps : undefined;
}
