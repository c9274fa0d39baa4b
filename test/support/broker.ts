// Helpers for tests that talk to the real broker made available by test/support/global-setup.mjs.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { PulsarWebSocketClient } from '../../lib/pulsar/websocket/index.js';
import { LazyPulsarClient } from '../../lib/pulsar/lazy-client.js';
import type { PulsarClientLike, PulsarConsumer, PulsarMessage } from '../../lib/pulsar/client-types.js';
import type { NativePulsarModule } from '../../lib/pulsar/client-factory.js';

/** The broker's web service (admin API, and the WebSocket client's service URL). */
export const webUrl = (): string => process.env.PULSAR_WEB_URL ?? 'http://127.0.0.1:8080';

/** The client every broker suite runs on: scripts/run-tests.mjs runs them once per kind. */
export type TestClientKind = 'native' | 'websocket';
export const testClientKind = (): TestClientKind => (process.env.BQ_TEST_CLIENT === 'native' ? 'native' : 'websocket');
export const onNative = (): boolean => testClientKind() === 'native';

/** The broker's binary protocol URL (the native client's). */
export const nativeServiceUrl = (): string => process.env.PULSAR_SERVICE_URL ?? 'pulsar://127.0.0.1:6650';

/** The service URL that selects the client under test: pulsar:// (native) or http:// (WebSocket). */
export const serviceUrl = (): string => (onNative() ? nativeServiceUrl() : webUrl());

let nativeModule: NativePulsarModule | undefined;
/** The native pulsar-client module (made loadable by scripts/lib/native-client.mjs before the run). */
export function loadNative(): NativePulsarModule {
  nativeModule ??= createRequire(import.meta.url)('pulsar-client') as NativePulsarModule;
  return nativeModule;
}

/** Clients made by newClient(): an app given one is built from serviceUrl() instead, as users build it. */
const plainClients = new WeakSet<object>();

/** A raw client of the kind under test, pointed at the shared broker. */
export const newClient = (): PulsarClientLike => {
  const client = onNative() ? new (loadNative().Client)({ serviceUrl: serviceUrl() }) : newWebSocketClient();
  plainClients.add(client);
  return client;
};

/** Whether `client` is a plain client of the kind under test (made by newClient(), with no settings of its own). */
export const isPlainClient = (client: unknown): boolean =>
  typeof client === 'object' && client !== null && plainClients.has(client);

/** Whether `client` is an instance of the client under test (for the module's client: the one it created). */
export const isClientUnderTest = (client: unknown): boolean => {
  const created = client instanceof LazyPulsarClient ? client.current : client;
  return onNative()
    ? created instanceof (loadNative().Client as new () => object)
    : created instanceof PulsarWebSocketClient;
};

/** A raw WebSocket client: an observer independent of the client under test. */
export const newWebSocketClient = (): PulsarWebSocketClient => new PulsarWebSocketClient({ serviceUrl: webUrl() });

/** A topic name no other test uses. */
export const uniqueTopic = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns a truthy value, or fails after `timeoutMs` with `what`. */
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

/** Unacknowledged messages of a subscription, from the admin API. */
export async function backlog(topic: string, subscription = 'babelqueue'): Promise<number> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`);
  if (!response.ok) throw new Error(`stats of ${topic}: HTTP ${response.status}`);
  const stats = (await response.json()) as {
    subscriptions: Record<string, { msgBacklog: number; unackedMessages?: number }>;
  };
  const sub = stats.subscriptions[subscription];
  if (!sub) throw new Error(`no subscription ${subscription} on ${topic}`);
  return sub.msgBacklog;
}

/** Receives until `count` messages arrived (acknowledging each), or fails after `timeoutMs`. */
export async function receiveN(consumer: PulsarConsumer, count: number, timeoutMs = 20_000): Promise<PulsarMessage[]> {
  const messages: PulsarMessage[] = [];
  const deadline = Date.now() + timeoutMs;
  while (messages.length < count) {
    if (Date.now() > deadline) throw new Error(`received ${messages.length} of ${count} messages in ${timeoutMs} ms`);
    try {
      const message = await consumer.receive(500);
      await consumer.acknowledge(message);
      messages.push(message);
    } catch (error) {
      if (!/TimeOut/i.test(String(error))) throw error;
    }
  }
  return messages;
}

/** Asserts that nothing arrives within `ms`. */
export async function expectNothing(consumer: PulsarConsumer, ms: number): Promise<void> {
  try {
    const message = await consumer.receive(ms);
    throw new Error(`unexpected message ${message.getData().toString()}`);
  } catch (error) {
    if (!/TimeOut/i.test(String(error))) throw error;
  }
}
