import type { Envelope } from '../envelope/index.js';
import type { DeadLetterSelection } from './selection.js';

/** What happened to one dead-letter record in a redrive run. */
export type RedriveOutcome =
  /** Re-published to its target, then acknowledged on the DLQ. */
  | 'redriven'
  /** Dry run: it would have been redriven; left in the DLQ. */
  | 'planned'
  /** Not picked by the selector (reason, URN, ids, age, select); put back at the end of the DLQ. */
  | 'skipped'
  /** Not a BabelQueue envelope (e.g. a poison record) or names no queue to go back to; put back at the end. */
  | 'kept'
  /**
   * It names a target the run may not write to (see `allowedTargets`); put back at the end of the DLQ, and in a
   * dry run reported with the target it names.
   */
  | 'refused'
  /** A write failed; the record is left where it was and the run stopped. */
  | 'failed';

/** A record the selector looks at. */
export interface RedriveCandidate {
  envelope: Envelope;
  /** `dead_letter.reason`, else the `bq-dead-letter-reason` property; '' when neither. */
  reason: string;
  urn: string;
  properties: Readonly<Record<string, string>>;
}

/** Which records: `reason` (`failed`, `unknown_urn`, `poison`), `urn`, `ids`, `messageIds`, age; then `select`. */
export interface RedriveOptions extends DeadLetterSelection {
  /** The dead-letter topic to read, e.g. `orders.dlq`. */
  topic: string;
  /** Re-publish every record here (e.g. a sandbox topic) instead of the topic it was consumed from. */
  to?: string;
  /**
   * The topics a record may go back to (short or full names). By default only the topic whose dead letters the
   * DLQ holds (`orders` for `orders.dlq`): a record naming any other is refused and put back, since its body and
   * properties were written by whoever could publish (`meta.queue`, say, is the publisher's word).
   */
  allowedTargets?: readonly string[];
  /** Only records this returns true for (after the other selectors). */
  select?: (candidate: RedriveCandidate) => boolean;
  /** Read at most this many records (default: all that are there). */
  max?: number;
  /** Report what would happen; publish nothing, acknowledge nothing. */
  dryRun?: boolean;
  /** Stamp `bq-replay-bypass: "1"` so handlers can skip side effects that already ran. */
  bypass?: boolean;
  /**
   * The DLQ subscription the run reads through (default `babelqueue-redrive`, Exclusive, from the earliest
   * record). The module creates `babelqueue-redrive` with the DLQ producer, so it holds every record.
   */
  subscription?: string;
  /** How long an empty DLQ is waited on before the run ends, ms (default 1000). */
  idleTimeoutMs?: number;
  /** Called once per record, in order: the progress line of the CLI. */
  onItem?: (item: RedriveItem) => void;
}

export interface RedriveItem {
  outcome: RedriveOutcome;
  /** The Pulsar message id of the DLQ record, `(ledger,entry,partition,batchIndex)` on either client. */
  dlqMessageId: string;
  /** `meta.id` ('' for a record that is not an envelope). */
  id: string;
  traceId: string;
  urn: string;
  reason: string;
  /** Where it went or would go ('' when skipped before a target was known). */
  to: string;
  bypassed: boolean;
  /** Why it was kept, refused or failed. */
  detail?: string;
  /** The DLQ message id of the copy put back at the end of the DLQ (kept, skipped or refused; not on a dry run). */
  restoredAs?: string;
}

export interface RedriveResult {
  read: number;
  redriven: number;
  planned: number;
  skipped: number;
  kept: number;
  /** Records naming a target the run may not write to (put back, or left on a dry run). */
  refused: number;
  failed: number;
  items: RedriveItem[];
}
