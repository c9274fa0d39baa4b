// Helpers shared by the BabelQueueModule / BabelPulsarClient integration tests.
import { randomUUID } from 'node:crypto';
import { EnvelopeCodec, type Envelope } from '../../../../lib/envelope/index.js';
import type { PulsarConsumer, PulsarMessage } from '../../../../lib/pulsar/client-types.js';
import { PulsarWebSocketClient } from '../../../../lib/pulsar/websocket/index.js';

export const webUrl = (): string => process.env.PULSAR_WEB_URL ?? 'http://127.0.0.1:8080';

/** A topic name no other test (or helper sharing the broker) uses. */
export const uniqueTopic = (prefix: string): string => `bq-module-${prefix}-${randomUUID().slice(0, 8)}`;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

/** Asserts that nothing arrives within `ms`. */
export async function expectNothing(consumer: PulsarConsumer, ms: number): Promise<void> {
  let message: PulsarMessage | undefined;
  try {
    message = await consumer.receive(ms);
  } catch (error) {
    if (!/TimeOut/i.test(String(error))) throw error;
  }
  if (message) throw new Error(`unexpected message ${message.getData().toString()}`);
}

export function envelopeOf(message: PulsarMessage): Envelope {
  const { envelope, error } = EnvelopeCodec.decode(message.getData());
  if (error) throw new Error(`not an envelope: ${error}`);
  return envelope as Envelope;
}

/** Polls until `check` returns a truthy value, or fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

export const quietLogger = { log: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
