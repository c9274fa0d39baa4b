// Helpers shared by the BabelQueueModule / BabelPulsarClient integration tests.
import { randomUUID } from 'node:crypto';
import { EnvelopeCodec, type Envelope } from '../../../../lib/envelope/index.js';
import type { PulsarConsumer, PulsarMessage } from '../../../../lib/pulsar/client-types.js';
import { PulsarWebSocketClient } from '../../../../lib/pulsar/websocket/index.js';
import { webUrl } from '../../../support/broker.js';

export {
  expectNothing,
  isClientUnderTest,
  loadNative,
  nativeServiceUrl,
  newClient,
  onNative,
  serviceUrl,
  sleep,
  waitFor,
  webUrl,
} from '../../../support/broker.js';
export { quietLogger } from '../../../support/nest-app.js';

/** A topic name no other test (or helper sharing the broker) uses. */
export const uniqueTopic = (prefix: string): string => `bq-module-${prefix}-${randomUUID().slice(0, 8)}`;

/** A raw WebSocket client, independent of everything under test. */
export const rawClient = (serviceUrl = webUrl()): PulsarWebSocketClient => new PulsarWebSocketClient({ serviceUrl });

/** Subscribes a Shared subscription (before anything is published, so it sees every message). */
export const rawSubscribe = (
  client: PulsarWebSocketClient,
  topic: string,
  subscription = 'observer',
): Promise<PulsarConsumer> => client.subscribe({ topic, subscription, subscriptionType: 'Shared' });

/** The next message, acknowledged, or an error after `timeoutMs`. */
export async function receiveOne(consumer: PulsarConsumer, timeoutMs = 15_000): Promise<PulsarMessage> {
  const message = await consumer.receive(timeoutMs);
  await consumer.acknowledge(message);
  return message;
}

export function envelopeOf(message: PulsarMessage): Envelope {
  const { envelope, error } = EnvelopeCodec.decode(message.getData());
  if (error) throw new Error(`not an envelope: ${error}`);
  return envelope as Envelope;
}
