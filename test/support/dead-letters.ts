// Dead-letter records as the server writes them, published straight to a DLQ.
import { EnvelopeCodec, type Envelope, type PulsarClientLike } from '../../lib/index.js';
import { deadLetterProperties, deadLetterRecord } from '../../lib/envelope/index.js';
import { pulsarProperties } from '../../lib/pulsar/index.js';
import { webUrl } from './broker.js';

export interface DeadLetterFixture {
  reason: 'failed' | 'unknown_urn';
  error?: Error;
  attempts?: number;
  failedAt?: number;
}

export async function publishDeadLetter(
  client: PulsarClientLike,
  dlq: string,
  envelope: Envelope,
  { reason, error = new Error('boom'), attempts = 3, failedAt = Date.now() }: DeadLetterFixture,
): Promise<void> {
  const originalQueue = envelope.meta.queue;
  const record = deadLetterRecord(envelope, { reason, error, attempts, originalQueue, failedAt });
  const producer = await client.createProducer({ topic: dlq });
  await producer.send({
    data: EnvelopeCodec.encodeToBuffer(record),
    properties: {
      ...pulsarProperties(record),
      ...deadLetterProperties({ reason, error, attempts, originalQueue, failedAt }),
    },
  });
  await producer.close();
}

/** A poison record: bytes that are not an envelope, described by its properties only. */
export async function publishPoison(client: PulsarClientLike, dlq: string, bytes = 'not json {'): Promise<void> {
  const producer = await client.createProducer({ topic: dlq });
  await producer.send({
    data: Buffer.from(bytes),
    properties: {
      'bq-dead-letter-reason': 'poison',
      'bq-dead-letter-error': 'Unexpected end of JSON input',
      'bq-dead-letter-attempts': '1',
      'bq-dead-letter-original-queue': dlq.replace(/\.dlq$/, ''),
      'bq-dead-letter-failed-at': String(Date.now()),
    },
  });
  await producer.close();
}

/** Whether the admin API knows the topic (without creating it). */
export async function topicKnown(topic: string): Promise<boolean> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`);
  return response.ok;
}

/** Subscriptions of a topic, from the admin API. */
export async function subscriptionsOf(topic: string): Promise<string[]> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`);
  if (!response.ok) return [];
  return Object.keys(((await response.json()) as { subscriptions: Record<string, unknown> }).subscriptions);
}
