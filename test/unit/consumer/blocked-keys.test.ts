// onExhausted 'block-key' in the intake: a keyed message that failed for good stays unacknowledged and blocks its
// key (other keys go on, the waiting room counts it) until unblock(), which dead-letters it and runs the key's next.
import { TopicConsumer, type SettledEvent } from '../../../lib/consumer/index.js';
import type { Envelope } from '../../../lib/envelope/index.js';
import { FakeProducer, QueueConsumer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';

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
  return key === '' ? new FakeMessage(w.payload, w.properties) : new KeyedMessage(w.payload, w.properties, key);
};
const dataOf = (envelope: Envelope) => envelope.data as { key: string; seq: number };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

function blocking(run: (envelope: Envelope) => Promise<void>) {
  const consumer = new QueueConsumer();
  const deadLetterProducer = new FakeProducer('orders.dlq');
  const settled: SettledEvent[] = [];
  const errors: string[] = [];
  const loop = new TopicConsumer({
    topic: 'orders',
    consumer,
    retryProducer: new FakeProducer('orders'),
    deadLetterProducer,
    policy: { maxAttempts: 2 },
    resolve: handledBy((_urn, envelope) => run(envelope), { maxAttempts: 2 }),
    hooks: {},
    logger: { ...quiet, error: (line: string) => errors.push(line) },
    concurrency: 4,
    ordering: 'key',
    blockExhausted: true,
    onSettled: (event) => settled.push({ ...event }),
  });
  return { consumer, loop, deadLetterProducer, settled, errors };
}

describe("TopicConsumer with onExhausted 'block-key'", () => {
  it('blocks the key of a message out of attempts; other keys go on; unblock dead-letters it, then the key goes on', async () => {
    const seen: string[] = [];
    const { consumer, loop, deadLetterProducer, settled, errors } = blocking(async (envelope) => {
      const { key, seq } = dataOf(envelope);
      seen.push(`${key}${seq}`);
      if (key === 'a' && seq === 0) throw new Error('always');
    });
    consumer.queue.push(keyed('a', 0), keyed('a', 1), keyed('b', 0), keyed('b', 1));
    loop.start();
    await until(() => consumer.acked.length === 2 && loop.blockedKeys.length === 1);
    await sleep(20);
    expect(loop.blockedKeys).toEqual(['a']);
    expect(seen).toEqual(expect.arrayContaining(['a0', 'b0', 'b1']));
    expect(seen).not.toContain('a1');
    expect(deadLetterProducer.sent).toHaveLength(0);
    // The blocked message and the one waiting behind it both take room.
    expect(loop.laneWaitingCount).toBe(2);
    expect(settled.find((event) => event.action === 'block')).toMatchObject({ reason: 'failed', attempt: 2 });
    expect(errors.some((line) => line.includes('key blocked until unblocked'))).toBe(true);
    expect(await loop.unblock('nope')).toBeNull();

    const event = await loop.unblock('a');
    expect(event).toMatchObject({ action: 'dead-letter', written: true });
    await until(() => consumer.acked.length === 4);
    expect(deadLetterProducer.sent).toHaveLength(1);
    expect(seen.at(-1)).toBe('a1');
    expect(loop.blockedKeys).toEqual([]);
    expect(loop.laneWaitingCount).toBe(0);
    await loop.stop(1000);
  });

  it('dead-letters a message without a key, and one the handler asked to dead-letter, as usual', async () => {
    const { consumer, loop, deadLetterProducer } = blocking(async () => {
      throw new Error('always');
    });
    consumer.queue.push(keyed('', 0));
    loop.start();
    await until(() => consumer.acked.length === 1);
    expect(deadLetterProducer.sent).toHaveLength(1);
    expect(loop.blockedKeys).toEqual([]);
    await loop.stop(1000);
  });

  it('stop() leaves a blocked message unacknowledged, for redelivery', async () => {
    const { consumer, loop } = blocking(async () => {
      throw new Error('always');
    });
    consumer.queue.push(keyed('a', 0));
    loop.start();
    await until(() => loop.blockedKeys.length === 1);
    await loop.stop(1000);
    expect(consumer.acked).toHaveLength(0);
    expect(loop.blockedKeys).toEqual([]);
  });
});
