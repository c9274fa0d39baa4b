import { randomBytes } from 'node:crypto';
import {
  normalizeTopic,
  PulsarWebSocketClient,
  type PulsarWebSocketConsumer,
  type PulsarWebSocketMessage,
} from '../../../../lib/pulsar/websocket/index.js';

export const BROKER_URL = process.env.PULSAR_WEB_URL ?? 'http://127.0.0.1:8080';

/** A topic name no other test (or person sharing the broker) will use. */
export function uniqueTopic(prefix: string): string {
  return `ws-it-${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function waitFor(condition: () => boolean, timeoutMs = 10000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Reject if `promise` does not settle within `ms`; the timer is always cleared. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Receive exactly `count` messages (each within `perMessageMs`), optionally acking them. */
export async function receiveN(
  consumer: PulsarWebSocketConsumer,
  count: number,
  { ack = true, perMessageMs = 10000 } = {},
): Promise<PulsarWebSocketMessage[]> {
  const out: PulsarWebSocketMessage[] = [];
  for (let i = 0; i < count; i++) {
    const message = await consumer.receive(perMessageMs);
    if (ack) await consumer.acknowledge(message);
    out.push(message);
  }
  return out;
}

/** Resolves with the rejection of `promise`, failing if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

export async function adminRequest(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${BROKER_URL}/admin/v2/${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

/** Best-effort cleanup so test topics do not pile up on a shared broker. */
export async function deleteTopic(fullName: string): Promise<void> {
  const path = fullName.replace('://', '/').split('/').map(encodeURIComponent).join('/');
  try {
    await adminRequest('DELETE', `${path}?force=true`);
  } catch {
    // ignore
  }
}

/**
 * Topics for one test file, deleted after it: `topic(prefix)` names a fresh one. Call at describe level.
 */
export function topicsDeletedAfterAll(): (prefix: string) => string {
  const topics: string[] = [];
  afterAll(() => Promise.all(topics.map(deleteTopic)));
  return (prefix) => {
    const name = uniqueTopic(prefix);
    topics.push(normalizeTopic(name));
    return name;
  };
}

/** One client for a test file (closed after it) and its self-cleaning topics. Call at describe level. */
export function liveClientFixture(): { client: () => PulsarWebSocketClient; topic: (prefix: string) => string } {
  let client: PulsarWebSocketClient | undefined;
  beforeAll(() => {
    client = new PulsarWebSocketClient({ serviceUrl: BROKER_URL, operationTimeoutMs: 10000 });
  });
  afterAll(() => client?.close());
  const topic = topicsDeletedAfterAll();
  return { client: () => client!, topic };
}
