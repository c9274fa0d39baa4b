// Pause and resume of one TopicConsumer, on both intakes (receive loop and push feed), and the selection of the
// consumers server.pause(target) acts on.
import { TopicConsumer } from '../../../lib/consumer/index.js';
import { PushFeed } from '../../../lib/consumer/push-feed.js';
import { selectSubscriptions } from '../../../lib/nest/server/pause-control.js';
import { FakeProducer, QueueConsumer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';

const quiet = { log: () => {}, warn: () => {}, error: () => {} };
const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));
const until = async (what: () => boolean) => {
  for (let i = 0; i < 400 && !what(); i++) await tick();
  if (!what()) throw new Error('condition not reached');
};
const message = (n: number) => {
  const w = wire(envelopeOf('urn:babel:orders:created', { n }));
  return new FakeMessage(w.payload, w.properties);
};

function intake(concurrency: number, feed?: PushFeed, pausedHoldLimit?: number) {
  const consumer = new QueueConsumer();
  const handled: number[] = [];
  const gates: Array<() => void> = [];
  let gated = false;
  const loop = new TopicConsumer({
    topic: 'orders',
    consumer,
    retryProducer: new FakeProducer('orders'),
    deadLetterProducer: new FakeProducer('orders.dlq'),
    policy: { maxAttempts: 3 },
    resolve: handledBy(async (_urn, envelope) => {
      if (gated) await new Promise<void>((resolve) => gates.push(resolve));
      handled.push((envelope.data as { n: number }).n);
    }),
    hooks: {},
    logger: quiet,
    concurrency,
    ...(feed && { feed }),
    ...(pausedHoldLimit !== undefined && { pausedHoldLimit }),
  });
  return {
    consumer,
    loop,
    handled,
    gate: (on: boolean) => {
      gated = on;
    },
    open: () => gates.splice(0).forEach((resolve) => resolve()),
  };
}

describe("TopicConsumer.pause() over the consumer's own receive()", () => {
  it('resolves once the messages in hand are settled, then asks for nothing until resume()', async () => {
    const { consumer, loop, handled, gate, open } = intake(2);
    gate(true);
    consumer.queue.push(message(1), message(2));
    loop.start();
    await until(() => consumer.queue.length === 0);
    let paused = false;
    const pausing = loop.pause().then(() => (paused = true));
    await tick(20);
    expect(paused).toBe(false); // two handlers still run
    gate(false);
    open();
    await pausing;
    expect(consumer.acked).toHaveLength(2);

    for (let n = 3; n <= 6; n++) consumer.push(message(n));
    await tick(40);
    // What the intake took meanwhile is held, unacknowledged, for resume().
    expect(handled).toEqual([1, 2]);
    expect(consumer.acked).toHaveLength(2);
    expect(loop.isPaused).toBe(true);

    loop.resume();
    await until(() => consumer.acked.length === 6);
    expect(handled).toEqual([1, 2, 3, 4, 5, 6]);
    await loop.stop(1000);
  });

  it('stop() while paused closes the consumer and leaves what was not handled unacknowledged', async () => {
    const { consumer, loop, handled } = intake(1);
    loop.start();
    await loop.pause();
    consumer.push(message(1));
    await tick(30);
    await loop.stop(1000);
    expect(handled).toEqual([]);
    expect(consumer.acked).toHaveLength(0);
    expect(consumer.closed).toBe(true);
  });
});

describe('TopicConsumer.pause() with a push feed', () => {
  it('holds what the client pushes without parking its thread, and handles it in order on resume', async () => {
    const feed = new PushFeed();
    const { consumer, loop, handled } = intake(2, feed);
    loop.start();
    await loop.pause();
    const returned = [1, 2, 3, 4, 5].map((n) => feed.deliver(message(n)));
    // Nothing to wait for: other topics may share the native listener thread.
    expect(returned).toEqual([undefined, undefined, undefined, undefined, undefined]);
    await tick(20);
    expect(handled).toEqual([]);
    expect(loop.heldCount).toBe(5);

    loop.resume();
    // Pushed after the resume but before the held ones drained: it waits its turn.
    await feed.deliver(message(6));
    await until(() => consumer.acked.length === 6);
    expect(handled).toEqual([1, 2, 3, 4, 5, 6]);
    await loop.stop(1000);
  });

  it('makes the client wait once the hold limit is reached (it would ask the broker for more), until resume()', async () => {
    const feed = new PushFeed();
    const { consumer, loop, handled } = intake(1, feed, 3);
    loop.start();
    await loop.pause();
    expect([feed.deliver(message(1)), feed.deliver(message(2))]).toEqual([undefined, undefined]);
    let released = false;
    const third = feed.deliver(message(3));
    expect(third).toBeInstanceOf(Promise);
    void third!.then(() => (released = true));
    await tick(20);
    expect(released).toBe(false);
    expect(handled).toEqual([]);
    loop.resume();
    await third;
    await feed.deliver(message(4));
    await until(() => consumer.acked.length === 4);
    expect(handled).toEqual([1, 2, 3, 4]);
    await loop.stop(1000);
  });

  it('stop() releases a client parked at the hold limit', async () => {
    const feed = new PushFeed();
    const { consumer, loop } = intake(1, feed, 1);
    loop.start();
    await loop.pause();
    const parked = feed.deliver(message(1));
    await loop.stop(1000);
    await parked;
    expect(consumer.acked).toHaveLength(0);
  });

  it('keeps the concurrency bound while the held messages drain', async () => {
    const feed = new PushFeed();
    const { consumer, loop, gate, open } = intake(2, feed);
    loop.start();
    await loop.pause();
    for (let n = 1; n <= 6; n++) void feed.deliver(message(n));
    gate(true);
    loop.resume();
    await until(() => loop.activeCount === 2);
    await tick(20);
    expect(loop.activeCount).toBe(2);
    expect(loop.heldCount).toBe(4);
    gate(false);
    open();
    await until(() => consumer.acked.length === 6);
    await loop.stop(1000);
  });

  it('stop() while paused drops the held messages unacknowledged (the broker redelivers them)', async () => {
    const feed = new PushFeed();
    const { consumer, loop } = intake(1, feed);
    loop.start();
    await loop.pause();
    void feed.deliver(message(1));
    await loop.stop(1000);
    expect(loop.heldCount).toBe(0);
    expect(consumer.acked).toHaveLength(0);
    expect(consumer.closed).toBe(true);
  });
});

describe('selectSubscriptions (pause / resume targets)', () => {
  const consumed = [
    { topic: 'orders', name: 'babelqueue' },
    { topic: 'orders', name: 'audit' },
    { topic: 'persistent://public/default/payments', name: 'babelqueue' },
  ];
  const full = (topic: string) => (topic.includes('://') ? topic : `persistent://public/default/${topic}`);
  const select = (target: unknown) => selectSubscriptions(consumed, target, 'pause()', full);

  it('selects all, a topic by short or full name, a subscription, or both', () => {
    expect(select(undefined)).toEqual(consumed);
    expect(select({ topic: 'persistent://public/default/orders' })).toEqual(consumed.slice(0, 2));
    expect(select({ topic: 'payments' })).toEqual([consumed[2]]);
    expect(select({ subscription: 'babelqueue' })).toEqual([consumed[0], consumed[2]]);
    expect(select({ topic: 'orders', subscription: 'audit' })).toEqual([consumed[1]]);
  });

  it.each<[unknown, string]>([
    [
      { topic: 'order' },
      'pause(): this server consumes no topic "order"; it consumes orders (subscription babelqueue), orders ' +
        '(subscription audit), persistent://public/default/payments (subscription babelqueue)',
    ],
    [{ topic: 'payments', subscription: 'audit' }, 'consumes no topic "payments" and subscription "audit"'],
    ['orders', 'pause() takes { topic?, subscription? } or nothing (all), got the string "orders"'],
    [{ topics: 'orders' }, 'pause(): unknown key(s) topics; allowed: topic, subscription'],
    [{ topic: ' ' }, 'pause() topic must be a non-blank string, got the string " "'],
  ])('refuses %j', (target, error) => {
    expect(() => select(target)).toThrow(error);
  });
});
