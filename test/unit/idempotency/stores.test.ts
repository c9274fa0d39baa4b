import { InMemoryIdempotencyStore, type IdempotencyStore } from '../../../lib/index.js';
import { runOnce } from '../../../lib/idempotency/index.js';

test('the in-memory store forgets ids after ttlMs and keeps at most maxEntries (oldest out first)', () => {
  let now = 1000;
  const store = new InMemoryIdempotencyStore({ maxEntries: 2, ttlMs: 100, now: () => now });
  store.remember('a');
  store.remember('b');
  store.remember('c');
  expect([store.seen('a'), store.seen('b'), store.seen('c')]).toEqual([false, true, true]);
  expect(store.size).toBe(2);
  now += 100;
  expect(store.seen('b')).toBe(false);
  store.forget('c');
  expect(store.seen('c')).toBe(false);
  expect(() => new InMemoryIdempotencyStore({ maxEntries: 0 })).toThrow(/maxEntries/);
});

// Contract §4.2 conformance sequences: handler invocations counted, throwing ones included.
describe('runOnce follows the idempotency conformance sequences', () => {
  let store: IdempotencyStore;
  let calls: number;
  const ok = async () => {
    calls++;
  };
  const boom = async () => {
    calls++;
    throw new Error('boom');
  };
  beforeEach(() => {
    store = new InMemoryIdempotencyStore();
    calls = 0;
  });

  test('duplicate delivery and at-least-once redelivery run once', async () => {
    for (let i = 0; i < 4; i++) await runOnce(store, 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', ok);
    expect(calls).toBe(1);
  });

  test('distinct ids each run', async () => {
    for (const id of ['A', 'B', 'C']) await runOnce(store, id, ok);
    expect(calls).toBe(3);
  });

  test('a throw leaves the id unmarked', async () => {
    await expect(runOnce(store, 'x', boom)).rejects.toThrow('boom');
    await expect(runOnce(store, 'x', boom)).rejects.toThrow('boom');
    expect(await runOnce(store, 'x', ok)).toBe('ran');
    expect(await runOnce(store, 'x', ok)).toBe('duplicate');
    expect(calls).toBe(3);
  });

  test('a missing id fails open; forget allows a rerun', async () => {
    await runOnce(store, '', ok);
    await runOnce(store, '', ok);
    expect(calls).toBe(2);
    await runOnce(store, 'y', ok);
    await runOnce(store, 'y', ok);
    await store.forget('y');
    await runOnce(store, 'y', ok);
    expect(calls).toBe(4);
  });
});
