import type { Envelope } from '../envelope/index.js';
import type { DeadLetterView } from './dead-letter-view.js';
import { DeadLetterUsageError } from './errors.js';
import { resolveTarget, sourceQueueOf } from './reset.js';
import { deadLetterTopicName } from './topic-name.js';

/**
 * Where a redrive may write (pure). A record's body and properties are written by whoever could publish to the
 * topic, so the target a record names is checked against the operator's word: the `to` they gave, the
 * `allowedTargets` they listed, or by default the one topic whose dead letters the DLQ holds (`orders` for
 * `orders.dlq`). A record naming any other topic is refused, by name, and put back.
 */
export interface RedriveTargets {
  /** Full names a record may go back to; empty when only `to` is used. */
  readonly allowed: ReadonlySet<string>;
  /** Every record goes here (the operator named it). */
  readonly to: string | null;
  /** How the allowed targets were chosen, for the refusal's text. */
  readonly source: 'to' | 'allowedTargets' | 'default' | 'none';
}

/** `persistent://t/ns/orders` for `persistent://t/ns/orders.dlq`; null for a DLQ not named `<topic>.dlq`. */
export function topicOfDeadLetterTopic(dlq: string): string | null {
  return /\.dlq$/.test(dlq) && dlq.length > '.dlq'.length ? dlq.slice(0, -'.dlq'.length) : null;
}

/** The targets of a run over `dlq` (full name); throws DeadLetterUsageError for a malformed allowed target. */
export function redriveTargets(
  dlq: string,
  options: { to?: string | undefined; allowedTargets?: readonly string[] | undefined },
): RedriveTargets {
  if (options.to !== undefined)
    return { allowed: new Set(), to: deadLetterTopicName(resolveTarget(options.to.trim(), dlq)), source: 'to' };
  if (options.allowedTargets !== undefined) {
    if (!Array.isArray(options.allowedTargets))
      throw new DeadLetterUsageError('allowedTargets must be an array of topic names');
    const allowed = new Set(options.allowedTargets.map((name) => deadLetterTopicName(resolveTarget(name.trim(), dlq))));
    return { allowed, to: null, source: 'allowedTargets' };
  }
  const own = topicOfDeadLetterTopic(dlq);
  return own === null
    ? { allowed: new Set(), to: null, source: 'none' }
    : { allowed: new Set([own]), to: null, source: 'default' };
}

/**
 * The queue a record names: the topic this library recorded it was consumed from (`bq-dead-letter-topic`),
 * else — a record written by another SDK or an older version — `dead_letter.original_queue`, else `meta.queue`.
 */
export function namedQueueOf(view: DeadLetterView, envelope: Envelope): string {
  return view.consumedTopic ?? sourceQueueOf(envelope);
}

/** Why `target` (full name) is refused, or null when the run may write there. */
export function refusalOf(target: string, dlq: string, targets: RedriveTargets): string | null {
  if (targets.to !== null || targets.allowed.has(target)) return null;
  const list = [...targets.allowed].join(', ');
  switch (targets.source) {
    case 'allowedTargets':
      return `refused: it names ${target}, which is not one of the allowed targets (${list})`;
    case 'none':
      return (
        `refused: it names ${target}, and ${dlq} is not named <topic>.dlq, so no target is allowed by default: ` +
        'list them (allowedTargets, --allow-target) or name one (to, --to)'
      );
    default:
      return (
        `refused: it names ${target}, but a redrive from ${dlq} writes only to ${list} unless told otherwise ` +
        '(allowedTargets, --allow-target) or given a target (to, --to)'
      );
  }
}
