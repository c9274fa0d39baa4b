// The I/O layer around the decision: ordering of writes and acknowledgements, hooks, failure handling.
import { jest } from '@jest/globals';
import { processMessage, type ProcessorContext } from '../../../lib/consumer/index.js';
import { InvalidEnvelopeError, SchemaVersionRejectedError, UnknownUrnError } from '../../../lib/envelope/index.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy, type TestRun } from '../../support/handlers.js';

const silent = { log: () => {}, warn: jest.fn<(...args: any[]) => any>(), error: () => {}, debug: () => {} };

function setup({
  run,
  handles = (urn) => urn === 'urn:babel:orders:created',
  ...overrides
}: Partial<ProcessorContext> & { run?: TestRun; handles?: (urn: string) => boolean } = {}) {
  const journal: string[] = [];
  const consumer = new FakeConsumer(journal);
  const retryProducer = new FakeProducer('orders', journal);
  const deadLetterProducer = new FakeProducer('orders.dlq', journal);
  const calls: string[] = [];
  const ctx: ProcessorContext = {
    topic: 'orders',
    consumer,
    retryProducer,
    deadLetterProducer,
    policy: { maxAttempts: 3 },
    resolve: handledBy(
      run ??
        (async (urn) => {
          calls.push(urn);
        }),
      { handles },
    ),
    hooks: {},
    logger: { ...silent, warn: jest.fn<(...args: any[]) => any>() },
    now: () => 1000,
    ...overrides,
  };
  return { ctx, journal, consumer, retryProducer, deadLetterProducer, calls };
}

const valid = (properties: Record<string, string> = {}) => {
  const w = wire(envelopeOf());
  return new FakeMessage(w.payload, { ...w.properties, ...properties });
};

describe('processMessage', () => {
  it('runs the handler and acknowledges once', async () => {
    const { ctx, journal, calls } = setup();
    const event = await processMessage(valid(), ctx);
    expect(calls).toEqual(['urn:babel:orders:created']);
    expect(journal).toEqual(['ack']);
    expect(event).toMatchObject({ action: 'ack', urn: 'urn:babel:orders:created', topic: 'orders' });
  });

  it("reads the message id only when the event's messageId is read, and a copy of the event holds it as data", async () => {
    const { ctx } = setup();
    const message = valid();
    const getMessageId = jest.spyOn(message, 'getMessageId');
    const event = await processMessage(message, ctx);
    // On the native client an id is a call into the addon and a new native object: an acknowledged delivery that
    // nobody asks about never makes one.
    expect(getMessageId).not.toHaveBeenCalled();
    expect(event.messageId).toBe(message.id);
    expect(event.messageId).toBe(message.id);
    expect(getMessageId).toHaveBeenCalledTimes(1);
    const copy = { ...event };
    expect(Object.getOwnPropertyDescriptor(copy, 'messageId')).toMatchObject({ value: message.id, writable: true });
    expect(JSON.parse(JSON.stringify(event))).toEqual({
      topic: 'orders',
      messageId: message.id,
      urn: 'urn:babel:orders:created',
      action: 'ack',
    });
  });

  it('writes the retry copy before acknowledging the original (53)', async () => {
    const { ctx, journal, retryProducer } = setup({ run: async () => Promise.reject(new Error('nope')) });
    const event = await processMessage(valid(), ctx);
    expect(journal).toEqual(['send:orders', 'ack']);
    expect(retryProducer.sent[0]!.properties!['bq-attempts']).toBe('1');
    expect(retryProducer.sent[0]!.deliverAt).toBeUndefined();
    expect(retryProducer.sent[0]!.deliverAfter).toBeUndefined();
    expect(event).toMatchObject({ action: 'retry', attempt: 1, written: true });
  });

  it('negatively acknowledges, never acknowledges, when the retry publish fails', async () => {
    const onError = jest.fn<(...args: any[]) => any>();
    const { ctx, consumer, retryProducer } = setup({
      run: async () => Promise.reject(new Error('handler')),
      hooks: { onError },
    });
    retryProducer.failWith = new Error('broker down');
    const event = await processMessage(valid(), ctx);
    expect(consumer.acked).toHaveLength(0);
    expect(consumer.nacked).toHaveLength(1);
    expect(event.written).toBe(false);
    const messages = onError.mock.calls.map(([error]) => (error as Error).message);
    expect(messages).toEqual([
      'handler',
      expect.stringMatching(/could not write the retry copy to orders: broker down/),
    ]);
  });

  it('writes the dead-letter record before acknowledging, and calls onDeadLetter after the write (54)', async () => {
    const onDeadLetter = jest.fn<(...args: any[]) => any>();
    const { ctx, journal, deadLetterProducer } = setup({
      run: async () => Promise.reject(new Error('x')),
      hooks: { onDeadLetter },
    });
    await processMessage(valid({ 'bq-attempts': '2' }), ctx);
    expect(journal).toEqual(['send:orders.dlq', 'ack']);
    expect(deadLetterProducer.sent).toHaveLength(1);
    expect(onDeadLetter).toHaveBeenCalledWith(
      expect.objectContaining({ reason: 'failed', topic: 'orders.dlq' }),
      expect.any(FakeMessage),
    );
  });

  it('leaves the original unacknowledged when the dead-letter write fails (57)', async () => {
    const onError = jest.fn<(...args: any[]) => any>();
    const { ctx, consumer, deadLetterProducer } = setup({
      run: async () => Promise.reject(new Error('x')),
      hooks: { onError },
    });
    deadLetterProducer.failWith = new Error('dlq down');
    await processMessage(valid({ 'bq-attempts': '2' }), ctx);
    expect(consumer.acked).toHaveLength(0);
    expect(consumer.nacked).toHaveLength(1);
    expect(onError).toHaveBeenLastCalledWith(
      expect.objectContaining({ message: expect.stringMatching(/dlq down/) }),
      expect.anything(),
      expect.anything(),
    );
  });

  it('gate rejection: onError with SchemaVersionRejectedError and {}, no handler, no hook, acknowledged', async () => {
    const onError = jest.fn<(...args: any[]) => any>();
    const onUnknownUrn = jest.fn<(...args: any[]) => any>();
    const { ctx, journal, calls } = setup({ hooks: { onError, onUnknownUrn } });
    const message = valid({ 'bq-schema-version': '2' });
    await processMessage(message, ctx);
    expect(calls).toEqual([]);
    expect(onUnknownUrn).not.toHaveBeenCalled();
    expect(journal).toEqual(['ack']);
    const [error, envelope, passed] = onError.mock.calls[0]!;
    expect(error).toBeInstanceOf(SchemaVersionRejectedError);
    expect((error as SchemaVersionRejectedError).received).toBe('2');
    expect(envelope).toEqual({});
    expect(passed).toBe(message);
    expect(ctx.logger.warn).toHaveBeenCalled();
  });

  it('poison: onError with InvalidEnvelopeError, record to the dead-letter topic, then ack (62)', async () => {
    const onError = jest.fn<(...args: any[]) => any>();
    const { ctx, journal, deadLetterProducer } = setup({ hooks: { onError } });
    await processMessage(new FakeMessage(Buffer.from([0xff]), { 'bq-job': 'urn:babel:orders:created' }), ctx);
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(InvalidEnvelopeError);
    expect(journal).toEqual(['send:orders.dlq', 'ack']);
    expect(deadLetterProducer.sent[0]!.data.equals(Buffer.from([0xff]))).toBe(true);
  });

  it('unknown URN with onUnknownUrn: the hook is awaited, then acknowledged, no retry (61)', async () => {
    let done = false;
    const onUnknownUrn = jest.fn(async (..._args: any[]) => {
      await new Promise((r) => setTimeout(r, 10));
      done = true;
    });
    const { ctx, journal } = setup({ hooks: { onUnknownUrn } });
    await processMessage(valid({ 'bq-job': 'urn:babel:nobody' }), ctx);
    expect(done).toBe(true);
    expect(journal).toEqual(['ack']);
  });

  it('unknown URN without hook: onError(UnknownUrnError) and a retry (60)', async () => {
    const onError = jest.fn<(...args: any[]) => any>();
    const { ctx, journal } = setup({ hooks: { onError } });
    await processMessage(valid({ 'bq-job': 'urn:babel:nobody' }), ctx);
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(UnknownUrnError);
    expect(journal).toEqual(['send:orders', 'ack']);
  });

  it('a throwing onUnknownUrn counts as an unknown_urn failure', async () => {
    const { ctx, deadLetterProducer } = setup({
      hooks: {
        onUnknownUrn: () => {
          throw new Error('hook broke');
        },
      },
    });
    await processMessage(valid({ 'bq-job': 'urn:babel:nobody', 'bq-attempts': '2' }), ctx);
    expect(deadLetterProducer.sent[0]!.properties!['bq-dead-letter-reason']).toBe('unknown_urn');
  });

  it('calls onRoutingMismatch with both URNs; a throwing one changes nothing (39, 40)', async () => {
    const onRoutingMismatch = jest.fn((..._args: any[]) => {
      throw new Error('ignored');
    });
    const { ctx, journal, calls } = setup({ hooks: { onRoutingMismatch }, handles: () => true });
    await processMessage(valid({ 'bq-job': 'urn:babel:other' }), ctx);
    expect(onRoutingMismatch).toHaveBeenCalledWith(
      'urn:babel:other',
      'urn:babel:orders:created',
      expect.anything(),
      expect.anything(),
    );
    expect(calls).toEqual(['urn:babel:other']);
    expect(journal).toEqual(['ack']);
  });

  it('survives throwing and rejecting onError / onDeadLetter hooks', async () => {
    const { ctx, journal } = setup({
      run: async () => Promise.reject(new Error('x')),
      hooks: {
        onError: () => {
          throw new Error('onError broke');
        },
        onDeadLetter: async () => Promise.reject(new Error('onDeadLetter broke')),
      },
    });
    await processMessage(valid({ 'bq-attempts': '2' }), ctx);
    await new Promise((r) => setImmediate(r));
    expect(journal).toEqual(['send:orders.dlq', 'ack']);
  });

  it('negatively acknowledges when there is no retry producer (64)', async () => {
    const { ctx, journal } = setup({ retryProducer: null, run: async () => Promise.reject(new Error('x')) });
    const event = await processMessage(valid(), ctx);
    expect(journal).toEqual(['nack']);
    expect(event.action).toBe('nack');
  });

  it('acknowledges and warns when dropping at the cap without a dead-letter producer (58)', async () => {
    const { ctx, journal } = setup({ deadLetterProducer: null, run: async () => Promise.reject(new Error('x')) });
    const event = await processMessage(valid({ 'bq-attempts': '2' }), ctx);
    expect(journal).toEqual(['ack']);
    expect(event.action).toBe('drop');
    expect(ctx.logger.warn).toHaveBeenCalledWith(expect.stringMatching(/dropped/));
  });

  it('reports a failed acknowledgement without throwing (the broker redelivers)', async () => {
    const { ctx, consumer } = setup();
    consumer.ackFailure = new Error('socket closed');
    const event = await processMessage(valid(), ctx);
    expect(event.action).toBe('ack-failed');
  });

  describe('the log lines of a failed delivery', () => {
    function logged(overrides: Partial<ProcessorContext> = {}) {
      const lines: Array<[level: string, text: string]> = [];
      const push = (level: string) => (text: string) => void lines.push([level, text]);
      const { ctx } = setup({
        run: async () => Promise.reject(new Error('warehouse unavailable')),
        logger: { log: push('log'), warn: push('warn'), error: push('error'), debug: push('debug') },
        ...overrides,
      });
      return { ctx, lines };
    }

    it('one line, without the stack and without a debug repeat', async () => {
      const { ctx, lines } = logged();
      await processMessage(valid(), ctx);
      expect(lines).toEqual([['warn', expect.stringMatching(/^message failed: .*warehouse unavailable"$/)]]);
    });

    it('the stack on that line with logStackTraces', async () => {
      const { ctx, lines } = logged({ logStackTraces: true });
      await processMessage(valid(), ctx);
      expect(lines).toEqual([
        ['warn', expect.stringMatching(/^message failed: .*warehouse unavailable"\n.*\n\s+at /s)],
      ]);
    });

    it('then the dead-letter line, and the hooks each after the line it follows', async () => {
      const { ctx, lines } = logged({
        hooks: {
          onError: () => void lines.push(['hook', 'onError']),
          onDeadLetter: () => void lines.push(['hook', 'onDeadLetter']),
        },
      });
      await processMessage(valid({ 'bq-attempts': '2' }), ctx);
      expect(lines.map(([level, text]) => `${level} ${text.split(':')[0]}`)).toEqual([
        'error message failed',
        'hook onError',
        'warn dead-lettered',
        'hook onDeadLetter',
      ]);
    });
  });
});
