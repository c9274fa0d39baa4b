import { EnvelopeCodec, errorMessage, type Envelope } from '../envelope/index.js';
import type {
  PulsarClientLike,
  PulsarConsumer,
  PulsarMessage,
  PulsarMessageId,
  PulsarProducer,
  PulsarProducerMessage,
} from '../pulsar/client-types.js';
import { readRestOfBatch } from './batches.js';
import { decodeDeadLetter, type DecodedDeadLetter } from './dead-letter-view.js';
import { keyed, putBack } from './put-back.js';
import { DeadLetterUsageError } from './errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS, receiveOrIdle, subscribeToDeadLetters } from './read-dead-letters.js';
import { redriveProperties, resetForRedrive, resolveTarget } from './reset.js';
import { namedQueueOf, redriveTargets, refusalOf, type RedriveTargets } from './targets.js';
import { checkSelection, isSelected } from './selection.js';
import { deadLetterTopicName } from './topic-name.js';
import type { RedriveCandidate, RedriveItem, RedriveOptions, RedriveResult } from './types.js';

export { DEFAULT_REDRIVE_SUBSCRIPTION } from './read-dead-letters.js';
/** Clock difference allowed between this process and the one that dead-lettered a record again. */
const CLOCK_SKEW_MS = 5000;

/**
 * Moves dead-letter records back to their queue (docs/dead-letters.md). Each record is acknowledged on the DLQ only
 * after what replaces it was written: its reset copy on the target, or — for a record that is not redriven
 * (unparseable, not selected, naming no queue, refused) — the same bytes and properties re-published at the end of the
 * DLQ ("restored"). So a run with `max` always moves on: what one run leaves is behind the records it has not
 * read yet, never at the head for the next run. A run ends when it reaches the first record it restored itself.
 * A dry run writes and acknowledges nothing, so it shows exactly what a real run with the same `max` would do.
 */
export async function redrive(client: PulsarClientLike, options: RedriveOptions): Promise<RedriveResult> {
  const topic = checkOptions(options);
  const targets = redriveTargets(topic, options);
  const consumer = await subscribeToDeadLetters(client, { ...options, topic });
  const producers = new Map<string, Promise<PulsarProducer>>();
  const producerFor = (target: string) => cachedProducer(client, producers, target);
  const result: RedriveResult = {
    read: 0,
    redriven: 0,
    planned: 0,
    skipped: 0,
    kept: 0,
    refused: 0,
    failed: 0,
    items: [],
  };
  // meta.id → when this run redrove it. A record that fails again comes back to the DLQ while the run still reads:
  // it is left for the next run, or a run over a handler that keeps failing would never end.
  const redrivenAt = new Map<string, number>();
  const restored = new Set<string>();
  let last: DecodedDeadLetter | null = null;
  try {
    while (options.max === undefined || result.read < options.max) {
      const message = await receiveOrIdle(consumer, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
      if (!message) break;
      const record = decodeDeadLetter(message);
      // Everything from here on is what this run put back, or arrived after it: left for the next run.
      if (restored.has(record.view.messageId)) break;
      result.read++;
      last = record;
      let item = await handleRecord(record, options, topic, targets, redrivenAt, producerFor);
      if (item.outcome === 'redriven') {
        if (item.id !== '') redrivenAt.set(item.id, Date.now());
        await consumer.acknowledge(message);
      } else if (item.outcome !== 'planned' && item.outcome !== 'failed' && !options.dryRun) {
        item = await restore(record, item, topic, producerFor);
        if (item.restoredAs !== undefined) {
          restored.add(item.restoredAs);
          await consumer.acknowledge(message);
        }
      }
      result.items.push(item);
      result[item.outcome]++;
      options.onItem?.(item);
      if (item.outcome === 'failed') break;
    }
    if (last && !options.dryRun && result.failed === 0 && result.read === options.max) {
      const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
      for (const item of await finishBatch(consumer, last, topic, idleMs, producerFor)) {
        result.items.push(item);
        result[item.outcome]++;
        options.onItem?.(item);
      }
    }
  } finally {
    await Promise.allSettled([...producers.values()].map(async (p) => (await p).close()));
    // Unacknowledged records go back to the subscription's backlog when the consumer closes.
    await consumer.close().catch(() => undefined);
  }
  return result;
}

/** The fully qualified DLQ; throws DeadLetterUsageError for options that are wrong before anything is read. */
function checkOptions(options: RedriveOptions): string {
  if (typeof options?.topic !== 'string' || options.topic.trim() === '')
    throw new DeadLetterUsageError('redrive needs the dead-letter topic, e.g. { topic: "orders.dlq" }');
  if (options.max !== undefined && !(Number.isInteger(options.max) && options.max > 0))
    throw new DeadLetterUsageError(`redrive max must be a positive whole number, got ${String(options.max)}`);
  if (options.to !== undefined && options.to.trim() === '')
    throw new DeadLetterUsageError('redrive "to" must not be blank');
  if (options.to !== undefined) deadLetterTopicName(options.to);
  if (options.allowedTargets !== undefined && !Array.isArray(options.allowedTargets))
    throw new DeadLetterUsageError('redrive allowedTargets must be an array of topic names');
  for (const name of options.allowedTargets ?? []) {
    if (typeof name !== 'string' || name.trim() === '')
      throw new DeadLetterUsageError('redrive allowedTargets must be topic names, not blank');
    deadLetterTopicName(name);
  }
  checkSelection(options);
  return deadLetterTopicName(options.topic);
}

function cachedProducer(
  client: PulsarClientLike,
  producers: Map<string, Promise<PulsarProducer>>,
  topic: string,
): Promise<PulsarProducer> {
  let producer = producers.get(topic);
  if (!producer) {
    producer = client.createProducer({ topic, batchingEnabled: false });
    producers.set(topic, producer);
    producer.catch(() => producers.delete(topic));
  }
  return producer;
}

/** True for a record this run already redrove that was dead-lettered again since. */
function cameBack(id: string, message: PulsarMessage, redrivenAt: ReadonlyMap<string, number>): boolean {
  const at = redrivenAt.get(id);
  return at !== undefined && message.getPublishTimestamp() >= at - CLOCK_SKEW_MS;
}

async function send(producer: Promise<PulsarProducer>, copy: PulsarProducerMessage): Promise<PulsarMessageId | null> {
  return (await producer).send(copy);
}

/** Decides what happens to one record and, unless it is a dry run, publishes its redriven copy. */
async function handleRecord(
  record: DecodedDeadLetter,
  options: RedriveOptions,
  dlq: string,
  targets: RedriveTargets,
  redrivenAt: ReadonlyMap<string, number>,
  producerFor: (topic: string) => Promise<PulsarProducer>,
): Promise<RedriveItem> {
  const { view, envelope, message } = record;
  const item: RedriveItem = {
    outcome: 'kept',
    dlqMessageId: view.messageId,
    id: view.id,
    traceId: envelope?.trace_id ?? '',
    urn: envelope ? view.urn : '',
    reason: view.reason,
    to: '',
    bypassed: false,
  };
  if (envelope === null) return { ...item, detail: `not a BabelQueue envelope: ${view.invalid ?? ''}` };
  if (cameBack(item.id, message, redrivenAt))
    return { ...item, detail: 'dead-lettered again after this run redrove it: left for the next run' };
  const candidate: RedriveCandidate = { envelope, reason: view.reason, urn: view.urn, properties: view.properties };
  if (!isSelected(view, options) || (options.select && !options.select(candidate)))
    return { ...item, outcome: 'skipped' };
  let to: string;
  if (targets.to !== null) to = targets.to;
  else {
    const queue = namedQueueOf(view, envelope);
    if (queue === '') return { ...item, detail: 'names no queue: neither dead_letter.original_queue nor meta.queue' };
    try {
      // Checked by one rule on both clients: the native one would create a topic with a malformed name.
      to = deadLetterTopicName(resolveTarget(queue, dlq));
    } catch (error) {
      return { ...item, detail: `names a queue that is not a valid topic: ${errorMessage(error) ?? ''}` };
    }
  }
  const refusal = refusalOf(to, dlq, targets);
  if (refusal !== null) return { ...item, outcome: 'refused', to, detail: refusal };
  if (options.dryRun) return { ...item, outcome: 'planned', to, bypassed: options.bypass === true };

  const reset: Envelope = resetForRedrive(envelope);
  const copy = keyed(message, {
    data: EnvelopeCodec.encodeToBuffer(reset),
    properties: redriveProperties(view.properties, reset, options.bypass === true),
  });
  try {
    await send(producerFor(to), copy);
  } catch (error) {
    return { ...item, outcome: 'failed', to, detail: `publish to ${to} failed: ${errorMessage(error) ?? ''}` };
  }
  // Published: from here a lost ack only means the record may be redriven twice (same meta.id; idempotency helps).
  return { ...item, outcome: 'redriven', to, bypassed: options.bypass === true };
}

/**
 * Puts a record that is not redriven back at the end of the DLQ; the caller acknowledges the original only when
 * this succeeded. A failed write leaves the original in place.
 */
async function restore(
  { message }: DecodedDeadLetter,
  item: RedriveItem,
  dlq: string,
  producerFor: (topic: string) => Promise<PulsarProducer>,
): Promise<RedriveItem> {
  try {
    return { ...item, restoredAs: await putBack(producerFor(dlq), message) };
  } catch (error) {
    const why = item.detail ? `${item.detail}; ` : '';
    return {
      ...item,
      outcome: 'failed',
      detail: `${why}putting it back at the end of ${dlq} failed: ${errorMessage(error) ?? ''}`,
    };
  }
}

/**
 * Pulsar would bring back a whole batch of which only some records were acknowledged: a run stopped by `max`
 * inside a batch puts the rest of that batch back too (reported as skipped, not counted as read).
 */
async function finishBatch(
  consumer: PulsarConsumer,
  last: DecodedDeadLetter,
  dlq: string,
  idleMs: number,
  producerFor: (topic: string) => Promise<PulsarProducer>,
): Promise<RedriveItem[]> {
  const items: RedriveItem[] = [];
  for (const message of await readRestOfBatch(consumer, last.message, idleMs)) {
    const { view } = decodeDeadLetter(message);
    const base: RedriveItem = {
      outcome: 'skipped',
      dlqMessageId: view.messageId,
      id: view.id,
      traceId: '',
      urn: view.urn,
      reason: view.reason,
      to: '',
      bypassed: false,
      detail: 'beyond max, in the same Pulsar batch as a record this run acknowledged: put back',
    };
    const item = await restore({ ...last, message, view }, base, dlq, producerFor);
    if (item.restoredAs !== undefined) await consumer.acknowledge(message);
    items.push(item);
    if (item.outcome === 'failed') break;
  }
  return items;
}
