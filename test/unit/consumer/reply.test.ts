// The reply of a request as part of its settlement (docs/request-response.md): written before the acknowledgement,
// once per request, and a reply that cannot be written is a failed attempt, never an acknowledgement.
import { jest } from '@jest/globals';
import { processMessage, type ProcessorContext } from '../../../lib/consumer/index.js';
import type { PulsarProducerMessage } from '../../../lib/pulsar/client-types.js';
import { readReply, replyRequestOf } from '../../../lib/pulsar/index.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy, type TestRun } from '../../support/handlers.js';

const silent = { log: () => {}, warn: () => {}, error: jest.fn<(...args: unknown[]) => void>(), debug: () => {} };
const REPLY_TO = 'persistent://public/default/bq-replies-test';

function setup(run: TestRun, refuse?: Error) {
  const journal: string[] = [];
  const replies: Array<[string, PulsarProducerMessage]> = [];
  const ctx: ProcessorContext = {
    topic: 'orders',
    consumer: new FakeConsumer(journal),
    retryProducer: new FakeProducer('orders', journal),
    deadLetterProducer: new FakeProducer('orders.dlq', journal),
    policy: { maxAttempts: 2 },
    resolve: handledBy(run, { maxAttempts: 2 }),
    hooks: {},
    logger: silent,
    reply: async (topic, message) => {
      journal.push(`reply:${message.properties!['bq-reply-status']}`);
      if (refuse) throw refuse;
      replies.push([topic, message]);
    },
  };
  return { ctx, journal, replies };
}

const request = (attempts = '0', to = REPLY_TO) => {
  const w = wire(envelopeOf());
  return new FakeMessage(w.payload, {
    ...w.properties,
    'bq-attempts': attempts,
    'bq-reply-to': to,
    'bq-correlation-id': 'c-1',
  });
};

describe('replies in the settlement', () => {
  it('writes the reply, then acknowledges', async () => {
    const { ctx, journal, replies } = setup(async () => ({ total: 3 }));
    await processMessage(request(), ctx);
    expect(journal).toEqual(['reply:ok', 'ack']);
    const [topic, message] = replies[0]!;
    expect(topic).toBe(REPLY_TO);
    expect(readReply(message.properties!, message.data)).toEqual({
      correlationId: 'c-1',
      body: { status: 'ok', result: { total: 3 } },
    });
  });

  it('replies nothing for a retried attempt, and the error once the request is dead-lettered', async () => {
    const failing = setup(async () => Promise.reject(new RangeError('out of stock')));
    await processMessage(request('0'), failing.ctx);
    expect(failing.journal).toEqual(['send:orders', 'ack']);
    await processMessage(request('1'), failing.ctx);
    expect(failing.journal.slice(2)).toEqual(['send:orders.dlq', 'ack', 'reply:error']);
    const [, message] = failing.replies[0]!;
    expect(readReply(message.properties!, message.data)?.body).toEqual({
      status: 'error',
      error: { class: 'RangeError', message: 'out of stock' },
    });
  });

  it('a reply that cannot be written fails the attempt: retried, never acknowledged unanswered', async () => {
    const { ctx, journal } = setup(async () => 'done', new Error('not authorized'));
    const event = await processMessage(request('0'), ctx);
    expect(journal).toEqual(['reply:ok', 'send:orders', 'ack']);
    expect(event).toMatchObject({ action: 'retry' });
  });

  it('a message without both properties, or naming no topic, asks for no reply', async () => {
    expect(replyRequestOf({ 'bq-reply-to': REPLY_TO })).toBeNull();
    expect(replyRequestOf({ 'bq-correlation-id': 'c' })).toBeNull();
    expect(replyRequestOf({ 'bq-reply-to': ' ', 'bq-correlation-id': 'c' })).toBeNull();
    expect(replyRequestOf({ 'bq-reply-to': 'a/b/c/d', 'bq-correlation-id': 'c' })).toBeNull();
    expect(replyRequestOf({ 'bq-reply-to': 'replies', 'bq-correlation-id': 'c' })).toEqual({
      to: 'persistent://public/default/replies',
      correlationId: 'c',
    });
    const { ctx, journal } = setup(async () => 'done');
    await processMessage(request('0', 'a/b/c/d'), ctx);
    expect(journal).toEqual(['ack']);
  });
});
