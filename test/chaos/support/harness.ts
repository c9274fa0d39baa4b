// Shared pieces of the chaos scenarios: the chaos broker's URL, keyed publishing and dead-letter collection.
import { EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { loadNative, onNative } from '../../support/broker.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { buildProducerFrame } from '../../../lib/pulsar/websocket/producer.js';
import type { Ledger } from './ledger.js';

/** The broker the chaos global setup started (never the shared one). */
export const chaosWebUrl = (): string => {
  const url = process.env.BQ_CHAOS_WEB_URL;
  if (!url) throw new Error('BQ_CHAOS_WEB_URL is not set: run the chaos project (npm run test:chaos)');
  return url;
};

/**
 * A client of the kind under test on the chaos broker (BQ_TEST_CLIENT). A URL given (a proxy in front of the
 * web port) always means the WebSocket client: the native client would bypass a proxy after its lookup.
 */
export const chaosClient = (serviceUrl?: string): PulsarClientLike =>
  onNative() && serviceUrl === undefined
    ? new (loadNative().Client)({
        serviceUrl: process.env.BQ_CHAOS_SERVICE_URL ?? 'pulsar://127.0.0.1:16650',
        operationTimeoutSeconds: 30,
      })
    : new PulsarWebSocketClient({
        serviceUrl: serviceUrl ?? chaosWebUrl(),
        reconnect: { initialDelayMs: 50, maxDelayMs: 1000 },
      });

/** Every chaos message carries this property; handlers and dead-letter records report it back. */
export const KEY = 'chaos-key';

export function validMessage(urn: string, topic: string, key: string, data: Record<string, unknown> = {}) {
  const envelope = EnvelopeCodec.make(urn, { key, ...data }, { queue: topic });
  return { data: EnvelopeCodec.encodeToBuffer(envelope), properties: { ...pulsarProperties(envelope), [KEY]: key } };
}

/**
 * Subscribes an observer to `<topic>.dlq`. A broker just restarted on its data (the broker-crash scenario) can
 * take a while to serve a new topic, and that wait is not what these scenarios test: up to three tries.
 */
export async function subscribeDeadLetters(client: PulsarClientLike, topic: string): Promise<PulsarConsumer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.subscribe({ topic: `${topic}.dlq`, subscription: 'chaos', subscriptionType: 'Shared' });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/** Reads dead-letter records until stopped, marking each one's key in the ledger. */
export function collectDeadLetters(consumer: PulsarConsumer, ledger: Ledger): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const message = await consumer.receive(300);
        const key = message.getProperties()[KEY];
        if (key) ledger.markDeadLettered(key);
        await consumer.acknowledge(message);
      } catch (error) {
        if (!/TimeOut/i.test(String(error))) await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Waits until every sent message reached a terminal outcome, or the deadline passed. */
export async function settleAll(ledger: Ledger, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (ledger.lost().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
}

/** The largest `n` whose message `build(n)` still fits the WebSocket frame cap, 100 bytes to spare. */
export function nearFrameCap(build: (n: number) => { data: Buffer; properties: Record<string, string> }): number {
  const frameSize = (n: number) =>
    Buffer.byteLength(JSON.stringify(buildProducerFrame('persistent://public/default/t', build(n), '100000')));
  let low = 1;
  let high = 1_048_576;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (frameSize(mid) <= 1_048_576 - 100) low = mid;
    else high = mid - 1;
  }
  return low;
}
