import { BatchCollector, checkBatchOptions, type BatchVerdict } from '../../../lib/consumer/batch-collector.js';
import { BabelBatchContext, BabelHandler, BabelNonRetriableError, defineUrn } from '../../../lib/index.js';
import { batchContextFor } from '../../../lib/nest/context/babel-batch.context.js';
import type { BabelContext } from '../../../lib/nest/context/babel.context.js';

const outcome = (promise: Promise<void>) =>
  promise.then(
    () => 'ok',
    (error: unknown) => `failed: ${(error as Error).message}`,
  );

describe('checkBatchOptions', () => {
  it('fills the defaults and keeps what is given', () => {
    expect(checkBatchOptions(undefined, 'batch')).toBeUndefined();
    expect(checkBatchOptions({}, 'batch')).toEqual({ maxMessages: 100, maxWaitMs: 50 });
    expect(checkBatchOptions({ maxMessages: 7, maxWaitMs: 0 }, 'batch')).toEqual({ maxMessages: 7, maxWaitMs: 0 });
  });

  it.each([
    [5, 'batch must be an object such as { maxMessages: 100, maxWaitMs: 50 }, got 5'],
    [{ size: 3 }, 'batch option(s) size unknown; allowed: maxMessages, maxWaitMs'],
    [{ maxMessages: 0 }, 'batch.maxMessages must be an integer from 1 to 10000, got 0'],
    [{ maxMessages: 2.5 }, 'batch.maxMessages must be an integer from 1 to 10000, got 2.5'],
    [{ maxWaitMs: -1 }, 'batch.maxWaitMs must be a whole number of ms from 0 to 600000, got -1'],
  ])('refuses %j', (value, message) => {
    expect(() => checkBatchOptions(value, 'batch')).toThrow(message);
  });

  it('is checked by @BabelHandler, which also refuses batch with idempotency', () => {
    expect(() => BabelHandler('urn:x', { batch: { maxMessages: -1 } })).toThrow(
      '@BabelHandler batch.maxMessages must be an integer from 1 to 10000, got -1',
    );
    const store = { seen: () => false, remember: () => undefined, forget: () => undefined };
    expect(() => BabelHandler('urn:x', { batch: {}, idempotency: { store } })).toThrow(
      /@BabelHandler batch cannot be combined with idempotency/,
    );
  });
});

describe('a batch handler of a contract', () => {
  it('takes an array of the payload type (a single payload does not compile)', () => {
    const created = defineUrn<{ id: number }>('urn:babel:typed:batch');
    class Typed {
      @BabelHandler(created, { batch: {} })
      many(items: Array<{ id: number }>) {
        return items.length;
      }

      // @ts-expect-error: a batch handler receives an array
      @BabelHandler(created, { batch: {} })
      one(item: { id: number }) {
        return item.id;
      }
    }
    expect(new Typed().many([{ id: 1 }])).toBe(1);
  });
});

describe('BatchCollector', () => {
  it('hands over a full batch at once and gives each item its own verdict', async () => {
    const runs: number[][] = [];
    const collector = new BatchCollector<number>({ maxMessages: 3, maxWaitMs: 60_000 }, async (items) => {
      runs.push([...items]);
      return { failed: new Map([[1, new Error('second failed')]]) };
    });
    const results = await Promise.all([1, 2, 3].map((n) => outcome(collector.add(n))));
    expect(runs).toEqual([[1, 2, 3]]);
    expect(results).toEqual(['ok', 'failed: second failed', 'ok']);
  });

  it('hands over a partial batch when the first item waited maxWaitMs', async () => {
    const runs: number[][] = [];
    const collector = new BatchCollector<number>({ maxMessages: 10, maxWaitMs: 5 }, async (items) => {
      runs.push([...items]);
      return { failed: new Map() };
    });
    await Promise.all([collector.add(1), collector.add(2)]);
    expect(runs).toEqual([[1, 2]]);
  });

  it('fails every item of a batch whose run throws, even synchronously', async () => {
    const collector = new BatchCollector<number>({ maxMessages: 2, maxWaitMs: 60_000 }, (() => {
      throw new Error('handler crashed');
    }) as unknown as () => Promise<BatchVerdict>);
    expect(await Promise.all([outcome(collector.add(1)), outcome(collector.add(2))])).toEqual([
      'failed: handler crashed',
      'failed: handler crashed',
    ]);
  });

  it('hands over what waits on close, and each later item at once', async () => {
    const runs: number[][] = [];
    const collector = new BatchCollector<number>({ maxMessages: 10, maxWaitMs: 60_000 }, async (items) => {
      runs.push([...items]);
      return { failed: new Map() };
    });
    const waiting = collector.add(1);
    expect(collector.pending).toBe(1);
    collector.close();
    await waiting;
    await collector.add(2);
    expect(runs).toEqual([[1], [2]]);
  });
});

describe('BabelBatchContext', () => {
  const messages = [{ getAttempts: () => 0 }, { getAttempts: () => 2 }] as unknown as BabelContext[];

  it('gives each message its own context and records the failed ones', () => {
    const { context, failed } = batchContextFor(messages);
    expect(context).toBeInstanceOf(BabelBatchContext);
    expect(context.size).toBe(2);
    expect(context.getMessage(1).getAttempts()).toBe(2);
    const refused = new BabelNonRetriableError('bad');
    context.fail(1, refused);
    expect(context.failedIndexes()).toEqual([1]);
    expect(failed.get(1)).toBe(refused);
  });

  it('refuses an index outside the batch', () => {
    const { context } = batchContextFor(messages);
    expect(() => context.fail(2)).toThrow('batch message index must be an integer from 0 to 1, got 2');
    expect(() => context.getMessage(-1)).toThrow(RangeError);
  });
});
