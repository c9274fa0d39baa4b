// The per-instance rate limit on a fake clock: start times evenly spaced, no burst after an idle time, and the
// consumer waiting for its start time before the handler (and its time-out) begins.
import { jest } from '@jest/globals';
import { processMessage, type ProcessorContext } from '../../../lib/consumer/index.js';
import { RatePacer } from '../../../lib/consumer/rate-pacer.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';

describe('RatePacer (fake clock)', () => {
  it('spaces start times 1000 / maxPerSecond ms apart, the first at once', () => {
    const clock = { now: 10_000 };
    const pacer = new RatePacer(50, () => clock.now);
    expect([pacer.reserve(), pacer.reserve(), pacer.reserve(), pacer.reserve()]).toEqual([0, 20, 40, 60]);
  });

  it('never lets more than maxPerSecond start within any second, however many ask at once', () => {
    const clock = { now: 0 };
    const pacer = new RatePacer(10, () => clock.now);
    const starts: number[] = [];
    for (let i = 0; i < 100; i++) {
      starts.push(clock.now + pacer.reserve());
      if (i % 7 === 0) clock.now += 35; // asked unevenly, in clumps
    }
    for (const start of starts)
      expect(starts.filter((s) => s >= start && s < start + 1000).length).toBeLessThanOrEqual(10);
  });

  it('saves up nothing while idle: after a quiet minute the next ones are spaced again', () => {
    const clock = { now: 0 };
    const pacer = new RatePacer(4, () => clock.now);
    pacer.reserve();
    clock.now += 60_000;
    expect([pacer.reserve(), pacer.reserve(), pacer.reserve()]).toEqual([0, 250, 500]);
  });

  it('takes fractions: 0.5 a second is one every 2 s', () => {
    const clock = { now: 0 };
    const pacer = new RatePacer(0.5, () => clock.now);
    expect([pacer.reserve(), pacer.reserve()]).toEqual([0, 2000]);
  });
});

describe('RatePacer.wait (fake clock and timers)', () => {
  afterEach(() => jest.useRealTimers());

  async function started(waits: Array<Promise<void>>): Promise<number> {
    let count = 0;
    for (const wait of waits) void wait.then(() => count++);
    await Promise.resolve();
    await Promise.resolve();
    return count;
  }

  it('starts the waiters one interval apart, in order', async () => {
    jest.useFakeTimers();
    const clock = { now: 0 };
    const pacer = new RatePacer(50, () => clock.now);
    const order: number[] = [];
    const waits = Array.from({ length: 5 }, (_, i) => pacer.wait().then(() => order.push(i)));
    for (let step = 0; step < 4; step++) {
      await Promise.resolve();
      clock.now += 20;
      jest.advanceTimersByTime(20);
    }
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('after a stall of the event loop, starts one and spaces the rest: no burst of what the stall delayed', async () => {
    jest.useFakeTimers();
    const clock = { now: 0 };
    const pacer = new RatePacer(50, () => clock.now);
    const waits = Array.from({ length: 10 }, () => pacer.wait());
    expect(await started(waits)).toBe(1);
    // 200 ms pass while the loop is busy; then the one timer fires, late.
    clock.now += 200;
    jest.advanceTimersByTime(20);
    expect(await started(waits)).toBe(2);
    clock.now += 20;
    jest.advanceTimersByTime(20);
    expect(await started(waits)).toBe(3);
  });
});

describe('processMessage with pace', () => {
  it('waits for its start time before the handler; an unknown URN does not wait', async () => {
    const journal: string[] = [];
    const order: string[] = [];
    let release!: () => void;
    const pace = jest.fn(
      () =>
        new Promise<void>((resolve) => {
          order.push('pace');
          release = resolve;
        }),
    );
    const ctx: ProcessorContext = {
      topic: 'orders',
      consumer: new FakeConsumer(journal),
      retryProducer: new FakeProducer('orders', journal),
      deadLetterProducer: new FakeProducer('orders.dlq', journal),
      policy: { maxAttempts: 3 },
      resolve: handledBy(
        async () => {
          order.push('handler');
        },
        { handles: (urn) => urn === 'urn:babel:orders:created' },
      ),
      hooks: {},
      logger: { log: () => {}, warn: () => {}, error: () => {} },
      pace,
      unknownUrn: { strategy: 'delete', maxReleases: 1 },
    };
    const w = wire(envelopeOf());
    const settling = processMessage(new FakeMessage(w.payload, w.properties), ctx);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['pace']);
    release();
    await settling;
    expect(order).toEqual(['pace', 'handler']);
    await processMessage(new FakeMessage(w.payload, { ...w.properties, 'bq-job': 'urn:babel:nobody' }), ctx);
    expect(pace).toHaveBeenCalledTimes(1);
  });
});
