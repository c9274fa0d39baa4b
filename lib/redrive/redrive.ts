import { EnvelopeCodec, errorMessage, type Envelope } from '../envelope/index.js';
import type {
  PulsarClientLike,
  PulsarConsumer,
  PulsarMessage,
  PulsarProducer,
  PulsarProducerMessage,
} from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import { redriveProperties, resetForRedrive, resolveTarget, sourceQueueOf } from './reset.js';
import type { RedriveCandidate, RedriveItem, RedriveOptions, RedriveResult } from './types.js';

export const DEFAULT_REDRIVE_SUBSCRIPTION = 'babelqueue-redrive';
const DEFAULT_IDLE_TIMEOUT_MS = 1000;
/** Clock difference allowed between this process and the one that dead-lettered a record again. */
const CLOCK_SKEW_MS = 5000;

/**
 * Moves dead-letter records back to their queue (docs/contract.md#redrive). Each record is acknowledged on the DLQ only after
 * its copy was published. Everything else — unparseable records, records the selector skips, a dry run, a failed
 * publish — is simply not acknowledged: it stays in the DLQ subscription's backlog byte for byte, with its message
 * id and position, for the next run. (Re-publishing it to the DLQ, as queue-based SDKs do, would change both.)
 */
export async function redrive(client: PulsarClientLike, options: RedriveOptions): Promise<RedriveResult> {
  checkOptions(options);
  const consumer = await client.subscribe({
    topic: options.topic,
    subscription: options.subscription ?? DEFAULT_REDRIVE_SUBSCRIPTION,
    // Exclusive: two runs at once would each see half the records; the second fails to subscribe instead.
    subscriptionType: 'Exclusive',
    subscriptionInitialPosition: 'Earliest',
  });
  const producers = new Map<string, Promise<PulsarProducer>>();
  const result: RedriveResult = { read: 0, redriven: 0, planned: 0, skipped: 0, kept: 0, failed: 0, items: [] };
  // meta.id → when this run redrove it. A record that fails again comes back to the DLQ while the run still reads:
  // it is left for the next run, or a run over a handler that keeps failing would never end.
  const redrivenAt = new Map<string, number>();
  try {
    while (options.max === undefined || result.read < options.max) {
      const message = await receiveOrIdle(consumer, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
      if (!message) break;
      result.read++;
      const item = await handleRecord(message, options, consumer, redrivenAt, (topic) =>
        producerFor(client, producers, topic),
      );
      if (item.outcome === 'redriven' && item.id !== '') redrivenAt.set(item.id, Date.now());
      result.items.push(item);
      result[item.outcome]++;
      options.onItem?.(item);
      if (item.outcome === 'failed') break;
    }
  } finally {
    await Promise.allSettled([...producers.values()].map(async (p) => (await p).close()));
    // Unacknowledged records go back to the subscription's backlog when the consumer closes.
    await consumer.close().catch(() => undefined);
  }
  return result;
}

function checkOptions(options: RedriveOptions): void {
  if (typeof options?.topic !== 'string' || options.topic.trim() === '')
    throw new TypeError('redrive needs the dead-letter topic, e.g. { topic: "orders.dlq" }');
  if (options.max !== undefined && !(Number.isInteger(options.max) && options.max > 0))
    throw new TypeError(`redrive max must be a positive whole number, got ${String(options.max)}`);
  if (options.to !== undefined && options.to.trim() === '') throw new TypeError('redrive "to" must not be blank');
}

/** The next record, or null once the DLQ stayed empty for `idleMs`. */
async function receiveOrIdle(consumer: PulsarConsumer, idleMs: number): Promise<PulsarMessage | null> {
  try {
    return await consumer.receive(idleMs);
  } catch (error) {
    // Both clients report an empty wait as a time-out error; anything else is real.
    if (/time ?out/i.test(String(error))) return null;
    throw error;
  }
}

function producerFor(
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

function candidateOf(envelope: Envelope, properties: Record<string, string>): RedriveCandidate {
  const blockReason = envelope.dead_letter?.reason;
  const reason = typeof blockReason === 'string' ? blockReason : (properties['bq-dead-letter-reason'] ?? '');
  return { envelope, reason, urn: EnvelopeCodec.urn(envelope), properties };
}

function isSelected(candidate: RedriveCandidate, options: RedriveOptions): boolean {
  if (options.reason !== undefined && candidate.reason !== options.reason) return false;
  if (options.urn !== undefined && candidate.urn !== options.urn.trim()) return false;
  return options.select ? options.select(candidate) : true;
}

/** True for a record this run already redrove that was dead-lettered again since. */
function cameBack(id: string, message: PulsarMessage, redrivenAt: ReadonlyMap<string, number>): boolean {
  const at = redrivenAt.get(id);
  return at !== undefined && message.getPublishTimestamp() >= at - CLOCK_SKEW_MS;
}

async function handleRecord(
  message: PulsarMessage,
  options: RedriveOptions,
  consumer: PulsarConsumer,
  redrivenAt: ReadonlyMap<string, number>,
  producerFor: (topic: string) => Promise<PulsarProducer>,
): Promise<RedriveItem> {
  const properties = message.getProperties();
  const base: RedriveItem = {
    outcome: 'kept',
    dlqMessageId: messageIdText(message.getMessageId()),
    id: '',
    traceId: '',
    urn: '',
    reason: properties['bq-dead-letter-reason'] ?? '',
    to: '',
    bypassed: false,
  };
  const decoded = EnvelopeCodec.decode(message.getData());
  const rejection = decoded.error ?? EnvelopeCodec.rejection(decoded.envelope);
  if (rejection !== null) return { ...base, detail: `not a BabelQueue envelope: ${rejection}` };
  const envelope = decoded.envelope as Envelope;
  const candidate = candidateOf(envelope, properties);
  const item: RedriveItem = {
    ...base,
    id: typeof envelope.meta.id === 'string' ? envelope.meta.id : '',
    traceId: envelope.trace_id,
    urn: candidate.urn,
    reason: candidate.reason,
  };
  if (cameBack(item.id, message, redrivenAt))
    return { ...item, detail: 'dead-lettered again after this run redrove it: left for the next run' };
  if (!isSelected(candidate, options)) return { ...item, outcome: 'skipped' };
  const queue = options.to?.trim() ?? sourceQueueOf(envelope);
  if (queue === '') return { ...item, detail: 'names no queue: neither dead_letter.original_queue nor meta.queue' };
  const to = resolveTarget(queue, options.topic.trim());
  if (options.dryRun) return { ...item, outcome: 'planned', to, bypassed: options.bypass === true };

  const reset = resetForRedrive(envelope);
  const copy: PulsarProducerMessage = {
    data: EnvelopeCodec.encodeToBuffer(reset),
    properties: redriveProperties(properties, reset, options.bypass === true),
  };
  // Keys survive, so a keyed (Key_Shared or partitioned) topic keeps the record with its siblings.
  const partitionKey = message.getPartitionKey();
  if (partitionKey) copy.partitionKey = partitionKey;
  const orderingKey = message.getOrderingKey?.();
  if (orderingKey) copy.orderingKey = orderingKey;
  try {
    await (await producerFor(to)).send(copy);
  } catch (error) {
    return { ...item, outcome: 'failed', to, detail: `publish to ${to} failed: ${errorMessage(error) ?? ''}` };
  }
  // Published: from here a lost ack only means the record may be redriven twice (same meta.id; idempotency helps).
  await consumer.acknowledge(message);
  return { ...item, outcome: 'redriven', to, bypassed: options.bypass === true };
}
