// ordering 'key' in the intake: a key's messages one at a time in the order received, keys in parallel, a failed
// message retried in place before the later messages of its key, and dead-lettered at its last attempt.
import { TopicConsumer, type SettledEvent } from '../../../lib/consumer/index.js';
import type { Envelope } from '../../../lib/envelope/index.js';
import type { PulsarMessage } from '../../../lib/pulsar/client-types.js';
import { FakeProducer, QueueConsumer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';
import type { RetryPolicy } from '../../../lib/consumer/retry-delay.js';
import { PushFeed } from '../../../lib/consumer/push-feed.js';

const quiet = { log: () => {}, warn: () => {}, error: () => {} };

class KeyedMessage extends FakeMessage {
  constructor(
    payload: Buffer,
    properties: Record<string, string>,
    private readonly key: string,
  ) {
    super(payload, properties);
  }
  override getPartitionKey(): string {
    return this.key;
  }
}

const keyed = (key: string, seq: number) => {
  const w = wire(envelopeOf('urn:babel:orders:created', { key, seq }));
  return new KeyedMessage(w.payload, w.properties, key);
};

const dataOf = (envelope: Envelope) => envelope.data as { key: string; seq: number };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function keyOrdered(
  concurrency: number,
  run: (envelope: Envelope, message: PulsarMessage) => Promise<void>,
  settings: { maxAttempts?: number; retryPolicy?: RetryPolicy } = {},
) {
  const consumer = new QueueConsumer();
  const retryProducer = new FakeProducer('orders');
  const deadLetterProducer = new FakeProducer('orders.dlq');
  const settled: SettledEvent[] = [];
  const loop = new TopicConsumer({
    topic: 'orders',
    consumer,
    retryProducer,
    deadLetterProducer,
    policy: { maxAttempts: settings.maxAttempts ?? 3 },
    resolve: handledBy((_urn, envelope, message) => run(envelope, message), settings),
    hooks: {},
    logger: quiet,
    concurrency,
    ordering: 'key',
    onSettled: (event) => settled.push({ ...event }),
  });
  return { consumer, loop, retryProducer, deadLetterProducer, settled };
}

async function until(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

describe("TopicConsumer with ordering 'key'", () => {
  it('runs each key in order, one at a time, while keys run in parallel up to concurrency 8', async () => {
    const keys = 12;
    const perKey = 15;
    const next = new Map<string, number>();
    const running = new Set<string>();
    let active = 0;
    let peak = 0;
    let violations = 0;
    const { consumer, loop } = keyOrdered(8, async (envelope) => {
      const { key, seq } = dataOf(envelope);
      if (running.has(key) || (next.get(key) ?? 0) !== seq) violations += 1;
      running.add(key);
      active += 1;
      peak = Math.max(peak, active);
      await sleep(Math.random() * 6);
      active -= 1;
      running.delete(key);
      next.set(key, seq + 1);
    });
    for (let seq = 0; seq < perKey; seq++) for (let k = 0; k < keys; k++) consumer.queue.push(keyed(`k${k}`, seq));
    loop.start();
    await until(() => consumer.acked.length === keys * perKey);
    await loop.stop(1000);
    expect(violations).toBe(0);
    expect(peak).toBe(8);
    expect(loop.laneWaitingCount).toBe(0);
  });

  it('retries a failed message in place, before the later messages of its key, without a copy', async () => {
    const seen: string[] = [];
    let failed = false;
    const { consumer, loop, retryProducer, settled } = keyOrdered(4, async (envelope) => {
      const { key, seq } = dataOf(envelope);
      seen.push(`${key}${seq}`);
      if (key === 'a' && seq === 0 && !failed) {
        failed = true;
        throw new Error('once');
      }
    });
    consumer.queue.push(keyed('a', 0), keyed('a', 1), keyed('a', 2));
    loop.start();
    await until(() => consumer.acked.length === 3);
    await loop.stop(1000);
    expect(seen).toEqual(['a0', 'a0', 'a1', 'a2']);
    expect(retryProducer.sent).toHaveLength(0);
    expect(consumer.nacked).toHaveLength(0);
    const retry = settled.find((event) => event.action === 'retry')!;
    expect(retry).toMatchObject({ inPlace: true, attempt: 1, retryDelayMs: 0 });
  });

  it('waits out the retry delay in the lane, holding only that key', async () => {
    const order: string[] = [];
    let failed = false;
    const { consumer, loop } = keyOrdered(
      4,
      async (envelope) => {
        const { key, seq } = dataOf(envelope);
        order.push(`${key}${seq}`);
        if (key === 'a' && seq === 0 && !failed) {
          failed = true;
          throw new Error('once');
        }
      },
      { retryPolicy: { backoff: 'fixed', initialDelayMs: 80 } },
    );
    consumer.queue.push(keyed('a', 0), keyed('a', 1), keyed('b', 0), keyed('b', 1));
    loop.start();
    await until(() => order.includes('b1'));
    // b went on while a waited for its retry.
    expect(order).not.toContain('a1');
    expect(loop.laneWaitingCount).toBe(2); // a0 waiting for its delay, a1 behind it
    await until(() => consumer.acked.length === 4);
    await loop.stop(1000);
    expect(order.filter((name) => name.startsWith('a'))).toEqual(['a0', 'a0', 'a1']);
  });

  it('counts attempts in place and dead-letters at maxAttempts, then the lane goes on', async () => {
    const seen: string[] = [];
    const { consumer, loop, deadLetterProducer, settled } = keyOrdered(
      2,
      async (envelope) => {
        const { key, seq } = dataOf(envelope);
        seen.push(`${key}${seq}@${envelope.attempts}`);
        if (seq === 0) throw new Error('always');
      },
      { maxAttempts: 3 },
    );
    consumer.queue.push(keyed('a', 0), keyed('a', 1));
    loop.start();
    await until(() => consumer.acked.length === 2);
    await loop.stop(1000);
    expect(seen).toEqual(['a0@0', 'a0@1', 'a0@2', 'a1@0']);
    expect(deadLetterProducer.sent).toHaveLength(1);
    expect(deadLetterProducer.sent[0]!.properties!['bq-attempts']).toBe('3');
    expect(settled.map((event) => event.action)).toEqual(['retry', 'retry', 'dead-letter', 'ack']);
  });

  it('runs messages without a key unordered, as without ordering', async () => {
    let active = 0;
    let peak = 0;
    const { consumer, loop } = keyOrdered(4, async () => {
      active += 1;
      peak = Math.max(peak, active);
      await sleep(10);
      active -= 1;
    });
    for (let i = 0; i < 8; i++) {
      const w = wire(envelopeOf());
      consumer.queue.push(new FakeMessage(w.payload, w.properties));
    }
    loop.start();
    await until(() => consumer.acked.length === 8);
    await loop.stop(1000);
    expect(peak).toBe(4);
  });

  it('holds a key behind a handler past its time-out until that handler ends', async () => {
    const order: string[] = [];
    let releaseHung!: () => void;
    const hung = new Promise<void>((resolve) => (releaseHung = resolve));
    let first = true;
    const consumer = new QueueConsumer();
    const loop = new TopicConsumer({
      topic: 'orders',
      consumer,
      retryProducer: new FakeProducer('orders'),
      deadLetterProducer: new FakeProducer('orders.dlq'),
      policy: { maxAttempts: 3 },
      resolve: handledBy(
        async (_urn, envelope) => {
          const { key, seq } = dataOf(envelope);
          order.push(`${key}${seq}`);
          if (key === 'a' && first) {
            first = false;
            await hung;
          }
        },
        { timeoutMs: 30 },
      ),
      hooks: {},
      logger: quiet,
      concurrency: 4,
      ordering: 'key',
    });
    consumer.queue.push(keyed('a', 0), keyed('a', 1), keyed('b', 0));
    loop.start();
    await sleep(120);
    // The time-out counted as a failed attempt, but a0's retry waits for its handler to end; b is not held.
    expect(order).toEqual(['a0', 'b0']);
    releaseHung();
    await until(() => consumer.acked.length === 3);
    await loop.stop(1000);
    expect(order).toEqual(['a0', 'b0', 'a0', 'a1']);
  });

  it("counts a stuck key's waiting messages against the intake's room: the client is made to wait", async () => {
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const consumer = new QueueConsumer();
    const feed = new PushFeed();
    const loop = new TopicConsumer({
      topic: 'orders',
      consumer,
      feed,
      retryProducer: new FakeProducer('orders'),
      deadLetterProducer: new FakeProducer('orders.dlq'),
      policy: { maxAttempts: 3 },
      resolve: handledBy(async (_urn, envelope) => {
        if (dataOf(envelope).seq === 0) await stuck;
      }),
      hooks: {},
      logger: quiet,
      concurrency: 2,
      pausedHoldLimit: 5,
      ordering: 'key',
    });
    loop.start();
    const results = Array.from({ length: 6 }, (_, seq) => feed.deliver(keyed('a', seq)));
    // a0 runs; a1..a5 wait in the lane: the fifth to wait fills the room and makes the client wait.
    expect(results.slice(0, 5).every((result) => result === undefined)).toBe(true);
    expect(results[5]).toBeInstanceOf(Promise);
    expect(feed.room.room()).toBe(1); // the free slot, for another key: the push that takes it waits too
    release();
    await results[5];
    await until(() => consumer.acked.length === 6);
    await loop.stop(1000);
  });

  it('a retry whose delay passes while paused runs on resume, before the messages held meanwhile', async () => {
    const order: string[] = [];
    let failed = false;
    const { consumer, loop } = keyOrdered(
      2,
      async (envelope) => {
        const { key, seq } = dataOf(envelope);
        order.push(`${key}${seq}`);
        if (key === 'a' && seq === 0 && !failed) {
          failed = true;
          throw new Error('once');
        }
      },
      { retryPolicy: { backoff: 'fixed', initialDelayMs: 40 } },
    );
    consumer.queue.push(keyed('a', 0), keyed('a', 1));
    loop.start();
    await until(() => order.length === 1);
    await loop.pause();
    await sleep(80);
    consumer.push(keyed('b', 0));
    await until(() => loop.heldCount === 1);
    expect(order).toEqual(['a0']);
    loop.resume();
    await until(() => consumer.acked.length === 3);
    await loop.stop(1000);
    expect(order).toEqual(['a0', 'a0', 'b0', 'a1']);
  });

  it('stop() leaves what waits in a lane or for a retry unacknowledged', async () => {
    const { consumer, loop } = keyOrdered(
      2,
      async (envelope) => {
        if (dataOf(envelope).seq === 0) throw new Error('fails');
      },
      { retryPolicy: { backoff: 'fixed', initialDelayMs: 10_000 } },
    );
    consumer.queue.push(keyed('a', 0), keyed('a', 1));
    loop.start();
    await until(() => loop.laneWaitingCount === 2);
    await loop.stop(100);
    expect(consumer.acked).toHaveLength(0);
    expect(loop.laneWaitingCount).toBe(0);
    expect(consumer.closed).toBe(true);
  });
});
