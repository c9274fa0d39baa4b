// The intake over a consumer's own receive(): the concurrency bound, graceful stop and the shutdown timeout, with a
// scripted consumer whose receive() waits for a message (no time-out) until it is closed, as the real clients do.
import { TopicConsumer } from '../../../lib/consumer/index.js';
import { FakeProducer, QueueConsumer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';

const quiet = { log: () => {}, warn: () => {}, error: () => {} };
const message = () => {
  const w = wire(envelopeOf());
  return new FakeMessage(w.payload, w.properties);
};

function consumerWith(concurrency: number, dispatch: () => Promise<void>) {
  const consumer = new QueueConsumer();
  const loop = new TopicConsumer({
    topic: 'orders',
    consumer,
    retryProducer: new FakeProducer('orders'),
    deadLetterProducer: new FakeProducer('orders.dlq'),
    policy: { maxAttempts: 3 },
    resolve: handledBy(dispatch),
    hooks: {},
    logger: quiet,
    concurrency,
  });
  return { consumer, loop };
}

describe('TopicConsumer', () => {
  it('never runs more than `concurrency` handlers at once and handles every message', async () => {
    let active = 0;
    let peak = 0;
    const { consumer, loop } = consumerWith(4, async () => {
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 15));
      active -= 1;
    });
    for (let i = 0; i < 20; i++) consumer.queue.push(message());
    loop.start();
    while (consumer.acked.length < 20) await new Promise((r) => setTimeout(r, 10));
    await loop.stop(1000);
    expect(peak).toBe(4);
    expect(consumer.acked).toHaveLength(20);
    expect(consumer.closed).toBe(true);
    expect(consumer.timedReceives).toBe(0);
  });

  it('stop() waits for in-flight handlers to settle before closing the consumer', async () => {
    let release!: () => void;
    const { consumer, loop } = consumerWith(1, () => new Promise<void>((r) => (release = r)));
    consumer.queue.push(message());
    loop.start();
    while (loop.activeCount === 0) await new Promise((r) => setTimeout(r, 5));
    const stopped = loop.stop(5000);
    await new Promise((r) => setTimeout(r, 30));
    expect(consumer.closed).toBe(false);
    release();
    await stopped;
    expect(consumer.acked).toHaveLength(1);
    expect(consumer.closed).toBe(true);
  });

  it('closes after shutdownTimeoutMs even if a handler hangs, leaving it unacknowledged', async () => {
    let handled = 0;
    const { consumer, loop } = consumerWith(1, () => {
      handled += 1;
      return new Promise<void>(() => {});
    });
    consumer.queue.push(message(), message());
    loop.start();
    while (loop.activeCount === 0) await new Promise((r) => setTimeout(r, 5));
    await loop.stop(50);
    expect(consumer.closed).toBe(true);
    expect(consumer.acked).toHaveLength(0);
    // The second message waited for a slot and was never handled: left unacknowledged, for redelivery.
    expect(handled).toBe(1);
  });

  it('waits for the next message without a time-out, and a message that comes later is handled', async () => {
    const { consumer, loop } = consumerWith(2, async () => {});
    loop.start();
    await new Promise((r) => setTimeout(r, 30));
    expect(consumer.receives).toBe(1);
    consumer.push(message());
    while (consumer.acked.length < 1) await new Promise((r) => setTimeout(r, 5));
    await loop.stop(100);
    expect(consumer.timedReceives).toBe(0);
    expect(consumer.closed).toBe(true);
  });

  it('keeps going after a receive error that is not a timeout', async () => {
    const { consumer, loop } = consumerWith(1, async () => {});
    let failures = 1;
    const original = consumer.receive.bind(consumer);
    consumer.receive = async () => {
      if (failures-- > 0) throw new Error('connection reset');
      return original();
    };
    consumer.queue.push(message());
    loop.start();
    while (consumer.acked.length < 1) await new Promise((r) => setTimeout(r, 10));
    await loop.stop(100);
    expect(consumer.acked).toHaveLength(1);
  });
});
