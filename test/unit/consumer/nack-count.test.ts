// retry 'nack' keeps its own count of each message's deliveries: the broker's redelivery count starts again at 0
// after a broker restart or a topic unload, and the cap must still hold.
import { jest } from '@jest/globals';
import { processMessage, type ProcessorContext } from '../../../lib/consumer/index.js';
import { NackCount } from '../../../lib/consumer/nack-count.js';
import type { PulsarMessage } from '../../../lib/pulsar/client-types.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';

const silent = { log: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/** The same message (same id) delivered again with the broker's redelivery count it would carry. */
function redelivery(original: FakeMessage, redeliveryCount: number): PulsarMessage {
  const again = new FakeMessage(original.payload, original.properties, redeliveryCount);
  return Object.assign(again, { getMessageId: () => original.getMessageId() });
}

describe('NackCount', () => {
  it('counts the nacks of each message, forgets a settled one, and remembers a bounded number', () => {
    const count = new NackCount(2);
    count.nacked('a');
    count.nacked('a');
    count.nacked('b');
    expect([count.before('a'), count.before('b'), count.before('c')]).toEqual([2, 1, 0]);
    count.settled('b');
    expect(count.before('b')).toBe(0);
    count.nacked('c');
    count.nacked('d');
    // The oldest nack goes first.
    expect([count.before('a'), count.before('c'), count.before('d'), count.size]).toEqual([0, 1, 1, 2]);
  });
});

describe("retry 'nack' across a reset of the broker's redelivery count", () => {
  it('dead-letters at maxAttempts though the broker says 0 again after a restart', async () => {
    const consumer = new FakeConsumer();
    const deadLetterProducer = new FakeProducer('orders.dlq');
    const ctx: ProcessorContext & { nackCount: NackCount } = {
      topic: 'orders',
      consumer,
      retryProducer: null,
      deadLetterProducer,
      policy: { maxAttempts: 3 },
      resolve: handledBy(async () => Promise.reject(new Error('still down'))),
      hooks: {},
      logger: { ...silent, warn: jest.fn<(line: string) => void>() },
      nackCount: new NackCount(),
    };
    const w = wire(envelopeOf());
    const first = new FakeMessage(w.payload, w.properties, 0);
    expect((await processMessage(first, ctx)).action).toBe('nack');
    // The broker restarted: its count of this message is 0 again.
    expect(await processMessage(redelivery(first, 0), ctx)).toMatchObject({ action: 'nack' });
    expect(await processMessage(redelivery(first, 0), ctx)).toMatchObject({ action: 'dead-letter', written: true });
    expect(deadLetterProducer.sent[0]!.properties!['bq-dead-letter-attempts']).toBe('3');
    expect(ctx.nackCount.size).toBe(0);
  });

  it("takes the broker's count when it is the larger (another consumer nacked it before)", async () => {
    const ctx: ProcessorContext = {
      topic: 'orders',
      consumer: new FakeConsumer(),
      retryProducer: null,
      deadLetterProducer: new FakeProducer('orders.dlq'),
      policy: { maxAttempts: 3 },
      resolve: handledBy(async () => Promise.reject(new Error('still down'))),
      hooks: {},
      logger: silent,
      nackCount: new NackCount(),
    };
    const w = wire(envelopeOf());
    expect((await processMessage(new FakeMessage(w.payload, w.properties, 2), ctx)).action).toBe('dead-letter');
  });
});
