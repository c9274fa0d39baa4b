import { EnvelopeCodec, type Envelope } from '../envelope/index.js';
import { BQ, pulsarProperties } from '../pulsar/binding.js';
import { REPLAY_BYPASS_VALUE } from './replay.js';

/**
 * The envelope a redrive re-publishes (docs/contract.md#redrive): the `dead_letter` block dropped and `attempts` reset to 0;
 * job, trace_id, data, meta (meta.id included) and unknown keys are kept exactly, numbers in their received text.
 */
export function resetForRedrive(envelope: Envelope): Envelope {
  const reset = EnvelopeCodec.withAttempts(envelope, 0);
  delete reset.dead_letter;
  return reset;
}

/**
 * Where a record goes back to: `dead_letter.original_queue`, else `meta.queue`; '' when it names neither.
 */
export function sourceQueueOf(envelope: Envelope): string {
  const original = envelope.dead_letter?.original_queue;
  if (typeof original === 'string' && original.trim() !== '') return original.trim();
  const queue = envelope.meta?.queue;
  return typeof queue === 'string' ? queue.trim() : '';
}

/**
 * A bare queue name lives in the dead-letter topic's namespace: `orders` read from
 * `persistent://acme/billing/orders.dlq` is `persistent://acme/billing/orders`. A full topic name is kept, and
 * `tenant/namespace/topic` is that topic.
 */
export function resolveTarget(queue: string, deadLetterTopic: string): string {
  if (queue.includes('://')) return queue;
  if (queue.includes('/')) return `persistent://${queue}`;
  const scheme = deadLetterTopic.indexOf('://');
  if (scheme < 0) return queue;
  const namespace = deadLetterTopic.slice(0, deadLetterTopic.lastIndexOf('/') + 1);
  return `${namespace}${queue}`;
}

/**
 * Properties of the redriven copy: the incoming ones (so e.g. `traceparent` survives) without the
 * `bq-dead-letter-*` annotations and without an earlier replay marker, then the `bq-*` projection of the reset
 * body (`bq-attempts: "0"`), then `bq-replay-bypass: "1"` when asked.
 */
export function redriveProperties(
  incoming: Readonly<Record<string, string>>,
  reset: Envelope,
  bypass: boolean,
): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const [key, value] of Object.entries(incoming)) {
    if (key.startsWith('bq-dead-letter-') || key === BQ.replayBypass) continue;
    properties[key] = value;
  }
  Object.assign(properties, pulsarProperties(reset));
  if (bypass) properties[BQ.replayBypass] = REPLAY_BYPASS_VALUE;
  return properties;
}
