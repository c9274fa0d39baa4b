// The unknown-URN strategies: the pure decision, and what the consumer does with each (fail, dead_letter, delete,
// release and release's bound).
import { jest } from '@jest/globals';
import { processMessage, type ProcessorContext } from '../../../lib/consumer/index.js';
import { decideUnknownUrn, type UnknownUrnStrategy } from '../../../lib/consumer/unknown-urn.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';
import { handledBy } from '../../support/handlers.js';

describe('decideUnknownUrn (pure)', () => {
  it('keeps the strategy, but a release past its bound fails', () => {
    for (const strategy of ['fail', 'dead_letter', 'delete'] as const)
      expect(decideUnknownUrn({ strategy, maxReleases: 2 }, 50)).toBe(strategy);
    expect(decideUnknownUrn({ strategy: 'release', maxReleases: 3 }, 0)).toBe('release');
    expect(decideUnknownUrn({ strategy: 'release', maxReleases: 3 }, 2)).toBe('release');
    expect(decideUnknownUrn({ strategy: 'release', maxReleases: 3 }, 3)).toBe('fail');
  });
});

describe('processMessage with an unknown URN', () => {
  function setup(strategy: UnknownUrnStrategy, hooks: ProcessorContext['hooks'] = {}) {
    const journal: string[] = [];
    const warn = jest.fn<(line: string) => void>();
    const ctx: ProcessorContext = {
      topic: 'orders',
      consumer: new FakeConsumer(journal),
      retryProducer: new FakeProducer('orders', journal),
      deadLetterProducer: new FakeProducer('orders.dlq', journal),
      policy: { maxAttempts: 3 },
      resolve: handledBy(async () => {}, { handles: (urn) => urn === 'urn:babel:orders:created' }),
      hooks,
      logger: { log: () => {}, warn, error: () => {}, debug: () => {} },
      now: () => 1000,
      unknownUrn: { strategy, maxReleases: 2 },
    };
    return { ctx, journal, warn };
  }
  const unknown = (redeliveryCount = 0) => {
    const w = wire(envelopeOf());
    return new FakeMessage(w.payload, { ...w.properties, 'bq-job': 'urn:babel:nobody' }, redeliveryCount);
  };

  it("fail: retried (today's behaviour), the hook when one is set", async () => {
    const { ctx, journal } = setup('fail');
    expect(await processMessage(unknown(), ctx)).toMatchObject({ action: 'retry', unknownUrn: 'fail' });
    expect(journal).toEqual(['send:orders', 'ack']);
    const onUnknownUrn = jest.fn(async () => {});
    const hooked = setup('fail', { onUnknownUrn });
    expect(await processMessage(unknown(), hooked.ctx)).toMatchObject({ action: 'ack' });
    expect(onUnknownUrn).toHaveBeenCalledTimes(1);
  });

  it('dead_letter: at the first attempt, reason unknown_urn', async () => {
    const { ctx, journal } = setup('dead_letter');
    const event = await processMessage(unknown(), ctx);
    expect(event).toMatchObject({ action: 'dead-letter', reason: 'unknown_urn', unknownUrn: 'dead_letter' });
    expect(journal).toEqual(['send:orders.dlq', 'ack']);
  });

  it('delete: acknowledged with a warning line; the hook is not called', async () => {
    const onUnknownUrn = jest.fn(async () => {});
    const { ctx, journal, warn } = setup('delete', { onUnknownUrn });
    expect(await processMessage(unknown(), ctx)).toMatchObject({ action: 'ack', unknownUrn: 'delete' });
    expect(journal).toEqual(['ack']);
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/no handler for urn:babel:nobody: acknowledged and deleted/),
    );
    expect(onUnknownUrn).not.toHaveBeenCalled();
  });

  it('release: negatively acknowledged, nothing written; past maxReleases it fails as fail does', async () => {
    const { ctx, journal } = setup('release');
    expect(await processMessage(unknown(1), ctx)).toMatchObject({ action: 'nack', unknownUrn: 'release' });
    expect(journal).toEqual(['nack']);
    // Released twice (redelivery count 2): nobody took it; its attempts include the redeliveries, so it is at the cap.
    expect(await processMessage(unknown(2), ctx)).toMatchObject({
      action: 'dead-letter',
      reason: 'unknown_urn',
      unknownUrn: 'fail',
    });
  });

  it('a known URN is handled whatever the strategy', async () => {
    const { ctx, journal } = setup('release');
    const w = wire(envelopeOf());
    expect(await processMessage(new FakeMessage(w.payload, w.properties), ctx)).toMatchObject({ action: 'ack' });
    expect(journal).toEqual(['ack']);
    expect((await processMessage(new FakeMessage(w.payload, w.properties), ctx)).unknownUrn).toBeUndefined();
  });
});
