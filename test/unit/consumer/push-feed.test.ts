// The push intake (the native client's listener): flow control by the promise the listener returns, messages
// pushed before start wait, messages pushed after stop are left for redelivery.
import { TopicConsumer } from '../../../lib/consumer/index.js';
import { PushFeed } from '../../../lib/consumer/push-feed.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy, type TestRun } from '../../support/handlers.js';

const quiet = { log: () => {}, warn: () => {}, error: () => {} };
const message = () => {
  const w = wire(envelopeOf());
  return new FakeMessage(w.payload, w.properties);
};
const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

function pushed(concurrency: number, run: TestRun, receiverQueue?: number) {
  const consumer = new FakeConsumer();
  const feed = new PushFeed();
  const intake = new TopicConsumer({
    topic: 'orders',
    consumer,
    retryProducer: new FakeProducer('orders'),
    deadLetterProducer: new FakeProducer('orders.dlq'),
    policy: { maxAttempts: 3 },
    resolve: handledBy(run),
    hooks: {},
    logger: quiet,
    concurrency,
    feed,
    ...(receiverQueue !== undefined && { pausedHoldLimit: receiverQueue }),
  });
  /** Pushes like the native listener thread: one message, then waits for the returned promise. */
  const pushAll = async (count: number) => {
    for (let i = 0; i < count; i++) await feed.deliver(message());
  };
  return { consumer, feed, intake, pushAll };
}

describe('TopicConsumer with a PushFeed', () => {
  it('holds the client back while `concurrency` handlers run, and handles every message', async () => {
    let active = 0;
    let peak = 0;
    const { consumer, intake, pushAll } = pushed(3, async () => {
      active += 1;
      peak = Math.max(peak, active);
      await tick(10);
      active -= 1;
    });
    intake.start();
    await pushAll(15);
    while (consumer.acked.length < 15) await tick();
    await intake.stop(1000);
    expect(peak).toBe(3);
    expect(consumer.acked).toHaveLength(15);
  });

  it('returns nothing to the client while a slot is free or a few messages wait, and a promise past that', async () => {
    const releases: Array<() => void> = [];
    const { consumer, feed, intake } = pushed(2, () => new Promise<void>((r) => releases.push(r)));
    intake.start();
    // The native client makes two native functions and parks its listener thread for any promise it is handed:
    // two messages take the slots, 63 more wait here in order, the 64th waiting one makes the client wait.
    for (let i = 0; i < 2 + 63; i++) expect(feed.deliver(message())).toBeUndefined();
    expect(intake.heldCount).toBe(63);
    const full = feed.deliver(message());
    expect(full).toBeInstanceOf(Promise);
    let resumed = false;
    void full!.then(() => (resumed = true));
    await tick();
    expect(resumed).toBe(false);
    expect(releases).toHaveLength(2); // never more than `concurrency` handlers
    // The client pushes again once every waiting message has a slot.
    while (intake.heldCount > 0) {
      releases.shift()!();
      await tick();
    }
    expect(resumed).toBe(true);
    while (consumer.acked.length < 66) {
      releases.splice(0).forEach((release) => release());
      await tick();
    }
    await intake.stop(1000);
    expect(consumer.acked).toHaveLength(66);
  });

  it('lets no more messages wait for a slot than the receiver queue holds (a slow consumer hoards no more)', async () => {
    const releases: Array<() => void> = [];
    const { consumer, feed, intake } = pushed(1, () => new Promise<void>((r) => releases.push(r)), 1);
    intake.start();
    expect(feed.deliver(message())).toBeUndefined(); // takes the slot
    const waiting = feed.deliver(message());
    expect(waiting).toBeInstanceOf(Promise); // the one waiting message fills the queue: the client waits
    expect(intake.heldCount).toBe(1);
    while (consumer.acked.length < 2) {
      releases.splice(0).forEach((release) => release());
      await tick();
    }
    await waiting;
    await intake.stop(1000);
  });

  it('hands the messages that waited for a slot to the handler in the order they came', async () => {
    const order: number[] = [];
    const { consumer, feed, intake } = pushed(1, async (_urn, envelope) => {
      order.push((envelope.data as { n: number }).n);
      await tick(1);
    });
    intake.start();
    for (let n = 0; n < 40; n++) {
      const w = wire(envelopeOf('urn:babel:orders:created', { n }));
      await feed.deliver(new FakeMessage(w.payload, w.properties));
    }
    while (consumer.acked.length < 40) await tick();
    await intake.stop(1000);
    expect(order).toEqual(Array.from({ length: 40 }, (_, n) => n));
  });

  it('handles no waiting message while paused, and the waiting ones first, in order, on resume', async () => {
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const { consumer, feed, intake } = pushed(1, (_urn, envelope) => {
      order.push((envelope.data as { n: number }).n);
      return new Promise<void>((resolve) => releases.push(resolve));
    });
    intake.start();
    const push = (n: number) => {
      const w = wire(envelopeOf('urn:babel:orders:created', { n }));
      return feed.deliver(new FakeMessage(w.payload, w.properties));
    };
    for (let n = 0; n < 4; n++) expect(push(n)).toBeUndefined(); // 0 runs, 1..3 wait for the slot
    const paused = intake.pause();
    releases.shift()!();
    await paused;
    expect(push(4)).toBeUndefined(); // pushed while paused: held behind the waiting ones
    await tick(20);
    expect(order).toEqual([0]);
    expect(intake.heldCount).toBe(4);
    intake.resume();
    while (consumer.acked.length < 5) {
      releases.splice(0).forEach((release) => release());
      await tick();
    }
    await intake.stop(1000);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('makes a message pushed before start() wait for it', async () => {
    let handled = 0;
    const { consumer, feed, intake } = pushed(1, async () => {
      handled += 1;
    });
    const delivered = feed.deliver(message());
    await tick(20);
    expect(handled).toBe(0);
    intake.start();
    await delivered;
    while (consumer.acked.length < 1) await tick();
    expect(handled).toBe(1);
    await intake.stop(1000);
  });

  it('releases a client waiting for a slot on stop, and leaves later pushes unacknowledged', async () => {
    let release: () => void = () => {};
    const { consumer, feed, intake } = pushed(1, () => new Promise<void>((r) => (release = r)));
    intake.start();
    // One takes the only slot, 63 wait for it, the next one holds the client until a slot frees.
    for (let i = 0; i < 64; i++) expect(feed.deliver(message())).toBeUndefined();
    const waiting = feed.deliver(message());
    expect(waiting).toBeInstanceOf(Promise);
    await tick();
    const stopped = intake.stop(1000);
    await waiting; // released by stop, not by a free slot
    expect(intake.heldCount).toBe(0); // the waiting ones are left unacknowledged, for redelivery
    await feed.deliver(message()); // after stop: left unacknowledged
    release();
    await stopped;
    expect(consumer.acked).toHaveLength(1);
    expect(consumer.nacked).toHaveLength(0);
    expect(consumer.closed).toBe(true);
  });

  it('says how many messages it takes before the client must wait, in every state', async () => {
    /** What room() said, and how many deliveries it took to get a promise back. */
    const check = (feed: PushFeed) => {
      const said = feed.room.room();
      let taken = 0;
      while (taken < 1000) {
        taken += 1;
        if (feed.deliver(message())) break;
      }
      return { said, taken };
    };
    const never = () => new Promise<void>(() => {});

    const idle = pushed(4, never, 10);
    expect(idle.feed.room.room()).toBe(0); // not started: nothing is taken at once
    idle.intake.start();
    expect(check(idle.feed)).toEqual({ said: 14, taken: 14 }); // 4 slots and a waiting room of 10 (its queue)

    const some = pushed(4, never, 100);
    some.intake.start();
    for (let i = 0; i < 6; i++) some.feed.deliver(message()); // 4 run, 2 wait
    expect(some.feed.room.room()).toBe(64 - 2);
    expect(check(some.feed)).toEqual({ said: 62, taken: 62 });

    const paused = pushed(2, async () => {});
    paused.intake.start();
    await paused.intake.pause();
    expect(paused.feed.room.room()).toBe(0); // while paused the client takes one at a time

    const stopped = pushed(2, async () => {});
    stopped.intake.start();
    await stopped.intake.stop(1000);
    expect(stopped.feed.room.room()).toBe(0);
    await Promise.all([idle.intake.stop(0), some.intake.stop(0)]);
  });

  it('makes a client that wants room for several wait until that much is free, or the consumer pauses or stops', async () => {
    const releases: Array<() => void> = [];
    const { feed, intake } = pushed(1, () => new Promise<void>((r) => releases.push(r)), 10);
    intake.start();
    for (let i = 0; i < 9; i++) feed.deliver(message()); // 1 runs, 8 wait: room for 2 more
    expect(feed.room.room()).toBe(2);
    let roomy = false;
    void feed.room.roomFor(4).then(() => (roomy = true));
    releases.shift()!(); // the next one runs: room for 3
    await tick();
    expect(feed.room.room()).toBe(3);
    expect(roomy).toBe(false);
    releases.shift()!();
    await tick();
    expect(roomy).toBe(true);
    await expect(feed.room.roomFor(4)).resolves.toBeUndefined(); // enough already

    let woken = false;
    void feed.room.roomFor(100).then(() => (woken = true));
    const paused = intake.pause();
    await tick();
    expect(woken).toBe(true); // paused: the client takes one at a time
    releases.splice(0).forEach((release) => release());
    await paused;
    intake.resume();

    let stoppedToo = false;
    void feed.room.roomFor(100).then(() => (stoppedToo = true));
    const stopping = intake.stop(1000);
    releases.splice(0).forEach((release) => release());
    await stopping;
    expect(stoppedToo).toBe(true);
  });
});
