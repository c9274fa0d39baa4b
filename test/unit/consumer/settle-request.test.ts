// Settling from the handler (ctx.retry / ctx.deadLetter): the pure mapping of a request to an outcome and a
// settlement (the same records as the thrown counterpart), the first-call-wins rule, and processMessage with it.
import {
  decideSettlement,
  inspect,
  processMessage,
  type InboundMessage,
  type Outcome,
  type ProcessorContext,
  type RetryPolicy,
  type SettlementPolicy,
} from '../../../lib/consumer/index.js';
import {
  checkRetryRequest,
  delayedRetryRefusal,
  outcomeOfRequest,
  RequestedSettlement,
  RetryRequestedError,
  SettleRequests,
} from '../../../lib/consumer/settle-request.js';
import { BabelNonRetriableError } from '../../../lib/envelope/index.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy, type TestHandlerSettings, type TestRun } from '../../support/handlers.js';

const NOW = 1_780_000_000_000;
const exponential: RetryPolicy = { backoff: 'exponential', initialDelayMs: 1000 };

function inbound(properties: Record<string, string> = {}): InboundMessage {
  const w = wire(envelopeOf());
  return { payload: w.payload, properties: { ...w.properties, ...properties }, redeliveryCount: 0, topic: 'orders' };
}
const policy = (overrides: Partial<SettlementPolicy> = {}): SettlementPolicy => ({
  maxAttempts: 3,
  retryBy: 'republish',
  deadLetter: true,
  now: NOW,
  ...overrides,
});
const decide = (message: InboundMessage, outcome: Outcome, p: SettlementPolicy = policy()) =>
  decideSettlement(message, inspect(message), outcome, p);
const thrown = (error: unknown, retriable?: boolean): Outcome => ({
  kind: 'failed',
  reason: 'failed',
  error,
  ...(retriable !== undefined && { retriable }),
});

describe('a request is settled as a failure of its kind (pure)', () => {
  it('ctx.deadLetter(reason) leaves the very record a thrown BabelNonRetriableError(reason) leaves', () => {
    const message = inbound();
    const requested = decide(message, outcomeOfRequest({ kind: 'dead-letter', reason: 'order 7 has no lines' }));
    const asThrown = decide(message, thrown(new BabelNonRetriableError('order 7 has no lines'), false));
    expect(requested).toEqual(asThrown);
    expect(requested).toMatchObject({ action: 'dead-letter', attempt: 1, nonRetriable: true, reason: 'failed' });
    if (requested.action !== 'dead-letter') return;
    expect(JSON.parse(requested.record.data.toString('utf8')).dead_letter).toMatchObject({
      reason: 'failed',
      error: 'order 7 has no lines',
      exception: 'BabelNonRetriableError',
      attempts: 1,
    });
    expect(requested.record.properties['bq-dead-letter-error']).toBe('order 7 has no lines');
  });

  it('ctx.retry() makes the retry copy a thrown retriable failure makes, with the same attempt accounting', () => {
    const message = inbound({ 'bq-attempts': '1' });
    const requested = decide(message, outcomeOfRequest({ kind: 'retry' }), policy({ retryPolicy: exponential }));
    const asThrown = decide(message, thrown(new Error('gateway down')), policy({ retryPolicy: exponential }));
    expect(requested).toEqual(asThrown);
    expect(requested).toMatchObject({ action: 'retry', attempt: 2, delayMs: 2000 });
  });

  it('ctx.retry() once the attempts are used up dead-letters as a retriable failure, the reason as the error', () => {
    const message = inbound({ 'bq-attempts': '2' });
    const requested = decide(message, outcomeOfRequest({ kind: 'retry', reason: 'stock not synced yet' }));
    const asThrown = decide(message, thrown(new RetryRequestedError('stock not synced yet')));
    expect(requested).toEqual(asThrown);
    expect(requested).toMatchObject({ action: 'dead-letter', attempt: 3, reason: 'failed' });
    expect(requested).not.toHaveProperty('nonRetriable');
    if (requested.action !== 'dead-letter') return;
    const record = JSON.parse(requested.record.data.toString('utf8'));
    const plain = decide(message, thrown(new Error('stock not synced yet')));
    if (plain.action !== 'dead-letter') throw new Error('expected a dead letter');
    // The same shape as any thrown failure's record: only the exception's name tells them apart.
    expect(Object.keys(record.dead_letter)).toEqual(
      Object.keys(JSON.parse(plain.record.data.toString('utf8')).dead_letter),
    );
    expect(Object.keys(requested.record.properties)).toEqual(Object.keys(plain.record.properties));
    expect(record.dead_letter).toMatchObject({ error: 'stock not synced yet', exception: 'RetryRequestedError' });
  });

  it('delayMs replaces the policy delay for that copy: a delay without a policy, none with one', () => {
    const delayed = decide(inbound(), outcomeOfRequest({ kind: 'retry', delayMs: 5000 }));
    expect(delayed).toMatchObject({ action: 'retry', attempt: 1, delayMs: 5000 });
    if (delayed.action !== 'retry') return;
    expect(delayed.copy.deliverAt).toBe(NOW + 5000);
    expect(delayed.copy.properties['bq-delay']).toBe('5000');

    const atOnce = decide(
      inbound(),
      outcomeOfRequest({ kind: 'retry', delayMs: 0 }),
      policy({ retryPolicy: exponential }),
    );
    expect(atOnce).toMatchObject({ action: 'retry', delayMs: 0 });
    if (atOnce.action !== 'retry') return;
    expect(atOnce.copy.deliverAt).toBeUndefined();
    expect(atOnce.copy.properties['bq-delay']).toBeUndefined();
  });

  it('a retry by negative acknowledgement stays one', () => {
    expect(decide(inbound(), outcomeOfRequest({ kind: 'retry' }), policy({ retryBy: 'nack' })).action).toBe('nack');
  });
});

describe('SettleRequests: the first call decides', () => {
  it('records a retry or a dead letter', () => {
    const retry = new SettleRequests();
    retry.retry({ delayMs: 250, reason: 'later' });
    expect(retry.settle()).toEqual({ kind: 'retry', delayMs: 250, reason: 'later' });
    const dead = new SettleRequests();
    dead.deadLetter('bad data');
    expect(dead.requested).toEqual({ kind: 'dead-letter', reason: 'bad data' });
    expect(new SettleRequests().settle()).toBeNull();
  });

  it.each<[string, (requests: SettleRequests) => void, RegExp]>([
    [
      'retry twice',
      (r) => r.retry(),
      /ctx\.retry\(\) was called after ctx\.retry\(\): the first call decides how the message is settled/,
    ],
    ['deadLetter after retry', (r) => r.deadLetter('x'), /ctx\.deadLetter\(\) was called after ctx\.retry\(\)/],
  ])('%s throws, and the first request stands', (_name, second, error) => {
    const requests = new SettleRequests();
    requests.retry();
    expect(() => second(requests)).toThrow(error);
    expect(requests.requested).toEqual({ kind: 'retry' });
  });

  it('retry after deadLetter names the dead letter', () => {
    const requests = new SettleRequests();
    requests.deadLetter('no such customer');
    expect(() => requests.retry()).toThrow(
      'ctx.retry() was called after ctx.deadLetter("no such customer"): the first call decides',
    );
  });

  it('a call once the message was settled throws', () => {
    const requests = new SettleRequests();
    requests.settle();
    expect(() => requests.deadLetter('late')).toThrow(
      /after the message was settled \(the handler passed its time-out\)/,
    );
  });

  it.each<[unknown, RegExp]>([
    [5, /ctx\.retry\(\) options must be an object \{ delayMs\?, reason\? \}, got the number 5/],
    [{ delay: 5 }, /ctx\.retry\(\) option\(s\) delay unknown; allowed: delayMs, reason/],
    [{ delayMs: -1 }, /ctx\.retry\(\) delayMs must be a whole number of ms >= 0, got the number -1/],
    [{ delayMs: 1.5 }, /delayMs must be a whole number/],
    [{ delayMs: '500' }, /delayMs must be a whole number of ms >= 0, got the string "500"/],
    [{ reason: '  ' }, /ctx\.retry\(\) reason must be a non-blank string/],
  ])('refuses the retry options %j', (options, error) => {
    expect(() => checkRetryRequest(options, null)).toThrow(error);
  });

  it('refuses a blank dead-letter reason', () => {
    expect(() => new SettleRequests().deadLetter('' as string)).toThrow(
      'ctx.deadLetter(reason): the reason must be a non-blank string, got the string ""',
    );
  });

  it('refuses a delay the consumer cannot honour, but not a retry at once', () => {
    const nack = delayedRetryRefusal(true, 'Shared');
    expect(() => checkRetryRequest({ delayMs: 1000 }, nack)).toThrow(
      "ctx.retry() delayMs needs retry 'republish' (a negative acknowledgement cannot carry a delay",
    );
    expect(() => checkRetryRequest({ delayMs: 1000 }, delayedRetryRefusal(false, 'Failover'))).toThrow(
      'ctx.retry() delayMs needs a Shared or KeyShared subscription',
    );
    expect(checkRetryRequest({ delayMs: 0 }, nack)).toEqual({ kind: 'retry', delayMs: 0 });
    expect(delayedRetryRefusal(false, 'KeyShared')).toBeNull();
  });
});

describe('processMessage with a handler that settles itself', () => {
  function setup(run: TestRun, settings: TestHandlerSettings = {}) {
    const lines: Array<[string, string]> = [];
    const record = (level: string) => (text: string) => void lines.push([level, text]);
    const consumer = new FakeConsumer();
    const retryProducer = new FakeProducer('orders');
    const deadLetterProducer = new FakeProducer('orders.dlq');
    const ctx: ProcessorContext = {
      topic: 'orders',
      consumer,
      retryProducer,
      deadLetterProducer,
      policy: { maxAttempts: 3 },
      resolve: handledBy(run, {
        isRetriable: () => {
          throw new Error('the classification is not asked for a request');
        },
        ...settings,
      }),
      hooks: {},
      logger: { log: record('log'), warn: record('warn'), error: record('error') },
      now: () => NOW,
      random: () => 0,
    };
    return { ctx, lines, consumer, retryProducer, deadLetterProducer };
  }
  const message = (properties: Record<string, string> = {}) => {
    const w = wire(envelopeOf());
    return new FakeMessage(w.payload, { ...w.properties, ...properties });
  };

  it('a retry request of a handler that returned: a retry copy, then the original acknowledged', async () => {
    const { ctx, consumer, retryProducer, lines } = setup(async (_urn, _envelope, _message, requests) => {
      requests.retry({ delayMs: 1500, reason: 'inventory is syncing' });
    });
    const event = await processMessage(message(), ctx);
    expect(event).toMatchObject({ action: 'retry', attempt: 1, written: true });
    expect(retryProducer.sent[0]).toMatchObject({ deliverAt: NOW + 1500 });
    expect(retryProducer.sent[0]!.properties).toMatchObject({ 'bq-attempts': '1', 'bq-delay': '1500' });
    expect(consumer.acked).toHaveLength(1);
    expect(lines).toEqual([
      ['warn', expect.stringContaining('outcome="retry in 1.5s" error="RetryRequestedError: inventory is syncing"')],
    ]);
  });

  it('a dead-letter request, then a throw: settled as asked, the throw reported on a line of its own', async () => {
    const { ctx, deadLetterProducer, retryProducer, lines } = setup(async (_urn, _envelope, _message, requests) => {
      requests.deadLetter('customer 9 is closed');
      throw new TypeError('cleanup failed');
    });
    const event = await processMessage(message(), ctx);
    expect(event).toMatchObject({ action: 'dead-letter', reason: 'failed', written: true });
    expect(retryProducer.sent).toHaveLength(0);
    expect(deadLetterProducer.sent[0]!.properties!['bq-dead-letter-error']).toBe('customer 9 is closed');
    expect(lines[0]).toEqual([
      'warn',
      'handler for "urn:babel:orders:created" on orders failed after asking for a dead letter: settled as asked; ' +
        'the failure was "cleanup failed"',
    ]);
    expect(lines[1]![1]).toContain('outcome="dead-lettered (not retriable)" error="BabelNonRetriableError: customer 9');
  });

  it("the server's RequestedSettlement marker is no failure of its own", async () => {
    const { ctx, lines } = setup(async (_urn, _envelope, _message, requests) => {
      requests.retry();
      throw new RequestedSettlement(requests.requested!);
    });
    await processMessage(message(), ctx);
    expect(lines.map(([, text]) => text)).toEqual([expect.stringMatching(/^message failed: .*RetryRequestedError/)]);
  });

  it('a request made before the time-out decides; one made after it throws', async () => {
    let late: unknown;
    let finish: () => void = () => {};
    const { ctx, retryProducer } = setup(
      (_urn, _envelope, _message, requests) =>
        new Promise<void>((resolve) => {
          requests.retry({ reason: 'try later' });
          finish = () => {
            try {
              requests.deadLetter('too late');
            } catch (error) {
              late = error;
            }
            resolve();
          };
        }),
      { timeoutMs: 20 },
    );
    const event = await processMessage(message(), ctx);
    expect(event).toMatchObject({ action: 'retry', written: true });
    expect(retryProducer.sent).toHaveLength(1);
    finish();
    expect(String(late)).toMatch(/ctx\.deadLetter\(\) was called after the message was settled/);
  });

  it("without a request, the handler's classification decides as before", async () => {
    const asked: unknown[][] = [];
    const { ctx, deadLetterProducer } = setup(async () => Promise.reject(new Error('bad')), {
      isRetriable: (...args) => {
        asked.push(args);
        return false;
      },
    });
    await processMessage(message(), ctx);
    expect(asked).toEqual([[expect.objectContaining({ message: 'bad' })]]);
    expect(deadLetterProducer.sent).toHaveLength(1);
  });
});
