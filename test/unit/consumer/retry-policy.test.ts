// Retry spacing (pure delay computation and its effect on the retry copy), non-retriable failures, and the
// per-failure / per-dead-letter log lines (through processMessage with a fake logger).
import { jest } from '@jest/globals';
import {
  checkRetryPolicy,
  decideSettlement,
  deadLetterLine,
  failureLine,
  inspect,
  processMessage,
  retryDelayMs,
  type InboundMessage,
  type Outcome,
  type ProcessorContext,
  type RetryPolicy,
  type SettlementPolicy,
} from '../../../lib/consumer/index.js';
import { BabelNonRetriableError } from '../../../lib/envelope/index.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy, type TestHandlerSettings, type TestRun } from '../../support/handlers.js';

const NOW = 1_780_000_000_000;
const exponential: RetryPolicy = { backoff: 'exponential', initialDelayMs: 1000, maxDelayMs: 10_000 };

describe('retryDelayMs (retry n → delay)', () => {
  it('is 0 without a policy (a retry is due at once)', () => {
    expect([1, 2, 5].map((n) => retryDelayMs(undefined, n))).toEqual([0, 0, 0]);
  });

  it('doubles from initialDelayMs per retry, capped at maxDelayMs', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(exponential, n))).toEqual([
      1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it('stays finite for very large retry numbers', () => {
    expect(retryDelayMs(exponential, 10_000)).toBe(10_000);
  });

  it('caps at 5 minutes by default', () => {
    expect(retryDelayMs({ backoff: 'exponential', initialDelayMs: 1000 }, 20)).toBe(300_000);
  });

  it('is the same for every retry with fixed backoff', () => {
    const fixed: RetryPolicy = { backoff: 'fixed', initialDelayMs: 750 };
    expect([1, 2, 3, 10].map((n) => retryDelayMs(fixed, n))).toEqual([750, 750, 750, 750]);
  });

  it('takes jitter as the fraction of the delay that is randomised, downwards only', () => {
    const jittered: RetryPolicy = { backoff: 'fixed', initialDelayMs: 1000, jitter: 0.25 };
    expect(retryDelayMs(jittered, 1, 0)).toBe(1000);
    expect(retryDelayMs(jittered, 1, 0.5)).toBe(875);
    expect(retryDelayMs(jittered, 1, 0.999_999)).toBe(750);
    const full: RetryPolicy = { backoff: 'exponential', initialDelayMs: 1000, jitter: 1 };
    expect(retryDelayMs(full, 3, 0.5)).toBe(2000);
  });
});

describe('checkRetryPolicy', () => {
  it('accepts a full policy and undefined', () => {
    expect(checkRetryPolicy({ ...exponential, jitter: 0.2 }, 'x')).toEqual({ ...exponential, jitter: 0.2 });
    expect(checkRetryPolicy(undefined, 'x')).toBeUndefined();
  });

  it.each<[unknown, RegExp]>([
    [null, /x must be an object/],
    ['exponential', /x must be an object/],
    [{ backoff: 'linear', initialDelayMs: 1 }, /x\.backoff must be 'exponential' or 'fixed'/],
    [{ backoff: 'fixed', initialDelayMs: 0 }, /x\.initialDelayMs must be a whole number of ms >= 1/],
    [{ backoff: 'fixed', initialDelayMs: 1.5 }, /x\.initialDelayMs/],
    [{ backoff: 'fixed', initialDelayMs: 100, maxDelayMs: 50 }, /x\.maxDelayMs must be a whole number of ms >= 100/],
    [{ backoff: 'fixed', initialDelayMs: 100, jitter: 1.5 }, /x\.jitter must be a fraction from 0 to 1/],
    [{ backoff: 'fixed', initialDelayMs: 100, jitter: true }, /x\.jitter/],
    [{ backoff: 'fixed', initialDelayMs: 100, delay: 5 }, /unknown key\(s\) delay/],
  ])('refuses %j', (value, message) => {
    expect(() => checkRetryPolicy(value, 'x')).toThrow(message);
  });
});

function valid(properties: Record<string, string> = {}): InboundMessage {
  const w = wire(envelopeOf());
  return { payload: w.payload, properties: { ...w.properties, ...properties }, redeliveryCount: 0, topic: 'orders' };
}
const policy = (overrides: Partial<SettlementPolicy> = {}): SettlementPolicy => ({
  maxAttempts: 5,
  retryBy: 'republish',
  deadLetter: true,
  now: NOW,
  ...overrides,
});
const failed = (error: unknown, retriable?: boolean): Outcome => ({
  kind: 'failed',
  reason: 'failed',
  error,
  ...(retriable !== undefined && { retriable }),
});
const decide = (message: InboundMessage, outcome: Outcome, p: SettlementPolicy) =>
  decideSettlement(message, inspect(message), outcome, p);

describe('the retry copy under a retry policy', () => {
  it('carries no delivery time and no bq-delay without a policy', () => {
    const settlement = decide(valid(), failed(new Error('x')), policy());
    expect(settlement).toMatchObject({ action: 'retry', delayMs: 0 });
    if (settlement.action !== 'retry') return;
    expect(settlement.copy.deliverAt).toBeUndefined();
    expect(settlement.copy.properties['bq-delay']).toBeUndefined();
  });

  it('carries deliverAt = now + delay and bq-delay for the n-th retry', () => {
    const third = decide(valid({ 'bq-attempts': '2' }), failed(new Error('x')), policy({ retryPolicy: exponential }));
    expect(third).toMatchObject({ action: 'retry', attempt: 3, delayMs: 4000 });
    if (third.action !== 'retry') return;
    expect(third.copy.deliverAt).toBe(NOW + 4000);
    expect(third.copy.properties['bq-delay']).toBe('4000');
    expect(third.copy.properties['bq-attempts']).toBe('3');
  });

  it('draws the jitter from the sample it is given', () => {
    const jittered = { backoff: 'fixed', initialDelayMs: 1000, jitter: 0.5 } as const;
    const settlement = decide(valid(), failed(new Error('x')), policy({ retryPolicy: jittered, jitterSample: 0.5 }));
    expect(settlement).toMatchObject({ action: 'retry', delayMs: 750 });
  });

  it('has no effect on a negative acknowledgement', () => {
    const settlement = decide(valid(), failed(new Error('x')), policy({ retryPolicy: exponential, retryBy: 'nack' }));
    expect(settlement.action).toBe('nack');
  });
});

describe('non-retriable failures', () => {
  it('go to the dead-letter topic on the first delivery, with the cause', () => {
    const error = new BabelNonRetriableError('order 7 has no lines');
    const settlement = decide(valid(), failed(error, false), policy());
    expect(settlement).toMatchObject({ action: 'dead-letter', reason: 'failed', attempt: 1, nonRetriable: true });
    if (settlement.action !== 'dead-letter') return;
    const record = JSON.parse(settlement.record.data.toString('utf8'));
    expect(record.dead_letter).toMatchObject({
      reason: 'failed',
      error: 'order 7 has no lines',
      exception: 'BabelNonRetriableError',
      attempts: 1,
    });
  });

  it('are acknowledged and dropped at once without a dead-letter topic', () => {
    const settlement = decide(valid(), failed(new Error('bad'), false), policy({ deadLetter: false }));
    expect(settlement).toMatchObject({ action: 'drop', attempt: 1 });
    if (settlement.action !== 'drop') return;
    expect(settlement.warning).toMatch(/not retriable \(attempt 1 of 5\)/);
  });
});

describe('log lines', () => {
  const facts = { urn: 'urn:babel:orders:created', messageId: '12:3:-1:0', topic: 'orders', maxAttempts: 3 };

  it.each<[Parameters<typeof failureLine>[0]['outcome'], number, string]>([
    [{ kind: 'retry', delayMs: 2000 }, 1, 'attempt=1/3 outcome="retry in 2s"'],
    [{ kind: 'retry', delayMs: 250 }, 1, 'outcome="retry in 250ms"'],
    [{ kind: 'retry', delayMs: 0 }, 2, 'attempt=2/3 outcome="retry now"'],
    [{ kind: 'nack' }, 1, 'outcome="retry by negative acknowledgement"'],
    [{ kind: 'dead-lettered', nonRetriable: false }, 3, 'attempt=3/3 outcome=dead-lettered'],
    [{ kind: 'dead-lettered', nonRetriable: true }, 1, 'outcome="dead-lettered (not retriable)"'],
    [{ kind: 'dropped', nonRetriable: false }, 3, 'outcome="dropped (no dead-letter topic)"'],
    [{ kind: 'not-written' }, 1, 'outcome="left for redelivery'],
  ])('reports %j', (outcome, attempt, expected) => {
    const line = failureLine({ ...facts, attempt, outcome, error: new TypeError('boom') });
    expect(line).toMatch(/^message failed: urn="urn:babel:orders:created" id=12:3:-1:0 topic=orders attempt=\d\/3 /);
    expect(line).toContain(expected);
    expect(line).toMatch(/ error="TypeError: boom"$/);
  });

  it('names an unreadable URN and a thrown non-Error', () => {
    const line = failureLine({ ...facts, urn: null, attempt: 1, outcome: { kind: 'nack' }, error: 'plain' });
    expect(line).toContain('urn=(unreadable)');
    expect(line).toMatch(/error="Error: plain"$/);
  });

  it('reports a dead-letter write', () => {
    expect(deadLetterLine({ ...facts, deadLetterTopic: 'orders.dlq', reason: 'failed', attempt: 3 })).toBe(
      'dead-lettered: urn="urn:babel:orders:created" id=12:3:-1:0 topic=orders to=orders.dlq reason=failed attempt=3',
    );
  });
});

describe('processMessage with a retry policy, per-handler settings and a fake logger', () => {
  function setup({
    run = async () => Promise.reject(new Error('database down')),
    ...handler
  }: TestHandlerSettings & { run?: TestRun } = {}) {
    const journal: string[] = [];
    const lines: Array<[string, string]> = [];
    const record = (level: string) => (text: string) => void lines.push([level, text]);
    const retryProducer = new FakeProducer('orders', journal);
    const deadLetterProducer = new FakeProducer('orders.dlq', journal);
    const ctx: ProcessorContext = {
      topic: 'orders',
      consumer: new FakeConsumer(journal),
      retryProducer,
      deadLetterProducer,
      policy: { maxAttempts: 3, retryPolicy: exponential },
      resolve: handledBy(run, { retryPolicy: exponential, ...handler }),
      hooks: {},
      logger: { log: record('log'), warn: record('warn'), error: record('error') },
      now: () => NOW,
      random: () => 0,
    };
    return { ctx, lines, retryProducer, deadLetterProducer };
  }
  const message = (properties: Record<string, string> = {}) => {
    const w = wire(envelopeOf());
    return new FakeMessage(w.payload, { ...w.properties, ...properties });
  };

  it('sends the retry copy with its delivery time and logs one line', async () => {
    const { ctx, lines, retryProducer } = setup();
    await processMessage(message({ 'bq-attempts': '1' }), ctx);
    expect(retryProducer.sent[0]!.deliverAt).toBe(NOW + 2000);
    expect(retryProducer.sent[0]!.properties!['bq-delay']).toBe('2000');
    expect(lines).toHaveLength(1);
    expect(lines[0]![0]).toBe('warn');
    expect(lines[0]![1]).toMatch(
      /^message failed: urn="urn:babel:orders:created" id=\S+ topic=orders attempt=2\/3 outcome="retry in 2s" error="Error: database down"$/,
    );
  });

  it("uses the handler's own maxAttempts and retryPolicy", async () => {
    const { ctx, lines, retryProducer } = setup({
      maxAttempts: 6,
      retryPolicy: { backoff: 'fixed', initialDelayMs: 300 },
    });
    await processMessage(message({ 'bq-attempts': '3' }), ctx);
    expect(retryProducer.sent[0]!.deliverAt).toBe(NOW + 300);
    expect(lines[0]![1]).toContain('attempt=4/6 outcome="retry in 300ms"');
  });

  it('logs a failure line and a dead-letter line at the cap', async () => {
    const { ctx, lines } = setup();
    await processMessage(message({ 'bq-attempts': '2' }), ctx);
    expect(lines.map(([level]) => level)).toEqual(['error', 'warn']);
    expect(lines[1]![1]).toMatch(
      /^dead-lettered: urn="urn:babel:orders:created" id=\S+ topic=orders to=orders.dlq reason=failed attempt=3$/,
    );
    expect(lines[0]![1]).toContain('attempt=3/3 outcome=dead-lettered error="Error: database down"');
  });

  it('dead-letters a BabelNonRetriableError on its first delivery by default', async () => {
    const { ctx, lines, retryProducer, deadLetterProducer } = setup({
      run: async () => Promise.reject(new BabelNonRetriableError('customer 9 is closed')),
    });
    const event = await processMessage(message(), ctx);
    expect(event).toMatchObject({ action: 'dead-letter', written: true });
    expect(retryProducer.sent).toHaveLength(0);
    expect(deadLetterProducer.sent).toHaveLength(1);
    expect(lines[0]![1]).toContain(
      'attempt=1/3 outcome="dead-lettered (not retriable)" error="BabelNonRetriableError: customer 9 is closed"',
    );
  });

  it('asks isRetriable for the classification', async () => {
    const isRetriable = jest.fn<(error: unknown) => boolean>(() => false);
    const { ctx, deadLetterProducer } = setup({ isRetriable });
    await processMessage(message(), ctx);
    expect(isRetriable).toHaveBeenCalledWith(expect.objectContaining({ message: 'database down' }));
    expect(deadLetterProducer.sent).toHaveLength(1);
  });

  it('logs a poison message once (failure line) and its dead-letter write', async () => {
    const { ctx, lines } = setup();
    await processMessage(new FakeMessage(Buffer.from('not json'), {}), ctx);
    expect(lines.map(([, text]) => text.split(':')[0])).toEqual(['message failed', 'dead-lettered']);
    expect(lines[0]![1]).toContain('urn=(unreadable)');
    expect(lines[0]![1]).toContain('error="InvalidEnvelopeError: ');
  });
});
