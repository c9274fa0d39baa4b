// The claim sequences every BabelQueue SDK's claiming store follows, on the in-memory store with a fake clock, and
// runClaimed on top of it. The PostgreSQL and Redis stores play the same sequences in
// test/integration/idempotency/claim-stores.test.ts.
import { BabelQueueOptionsError } from '../../../lib/index.js';
import {
  ClaimHeldError,
  InMemoryClaimStore,
  isClaimStore,
  runClaimed,
  type ClaimStore,
} from '../../../lib/idempotency/index.js';
import { resolveModuleOptions } from '../../../lib/nest/module/module-options.js';

let now: number;
const clock = () => now;
beforeEach(() => {
  now = 1_000;
});

describe('InMemoryClaimStore follows the claim sequences', () => {
  test('claim → held for others; commit → done for everyone', () => {
    const store = new InMemoryClaimStore({ now: clock, leaseMs: 100 });
    expect(store.claim('a', 't1')).toBe('claimed');
    expect(store.claim('a', 't2')).toBe('held');
    expect(store.claim('a', 't1')).toBe('held'); // a claim is not re-entrant
    store.commit('a', 't1');
    expect(store.claim('a', 't2')).toBe('done');
  });

  test('release → claimable again; a release with another token is a no-op', () => {
    const store = new InMemoryClaimStore({ now: clock });
    store.claim('a', 't1');
    store.release('a', 't2');
    expect(store.claim('a', 't2')).toBe('held');
    store.release('a', 't1');
    expect(store.claim('a', 't2')).toBe('claimed');
  });

  test('lease expiry → claimable; the late holder cannot release the new claim', () => {
    const store = new InMemoryClaimStore({ now: clock, leaseMs: 100 });
    store.claim('a', 't1');
    now += 99;
    expect(store.claim('a', 't2')).toBe('held');
    now += 1;
    expect(store.claim('a', 't2')).toBe('claimed');
    store.release('a', 't1');
    expect(store.claim('a', 't3')).toBe('held');
  });

  test('a committed id is forgotten after doneTtlMs, and at most maxEntries are kept, oldest out first', () => {
    const store = new InMemoryClaimStore({ now: clock, doneTtlMs: 1_000, maxEntries: 2 });
    for (const id of ['a', 'b', 'c']) {
      store.claim(id, id);
      store.commit(id, id);
    }
    expect(['a', 'b', 'c'].map((id) => store.claim(id, 'x'))).toEqual(['claimed', 'done', 'done']);
    store.release('a', 'x');
    now += 1_000;
    expect(store.claim('b', 'y')).toBe('claimed');
    expect(() => new InMemoryClaimStore({ leaseMs: 0 })).toThrow(/leaseMs/);
    expect(() => new InMemoryClaimStore({ maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
});

describe('runClaimed', () => {
  let store: InMemoryClaimStore;
  /** The waits of runClaimed move the fake clock, so a lease ends without waiting for it. */
  const sleep = async (ms: number) => {
    now += ms;
    await new Promise((resolve) => setImmediate(resolve));
  };
  beforeEach(() => {
    store = new InMemoryClaimStore({ now: clock, leaseMs: 60_000 });
  });

  test('two copies at once: one runs, the other waits for its commit and skips', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const body = async () => {
      runs++;
      await gate;
    };
    const first = runClaimed(store, 'id-1', body, { sleep });
    const second = runClaimed(store, 'id-1', body, { sleep });
    await sleep(10);
    expect(runs).toBe(1);
    release();
    expect(await Promise.all([first, second])).toEqual(['ran', 'duplicate']);
    expect(runs).toBe(1);
  });

  test('a failure releases the claim: the waiting copy runs, and the failure reaches the caller', async () => {
    let fail!: (error: Error) => void;
    const failing = new Promise<void>((_resolve, reject) => (fail = reject));
    let runs = 0;
    const first = runClaimed(
      store,
      'id-2',
      async () => {
        runs++;
        await failing;
      },
      { sleep },
    );
    const second = runClaimed(store, 'id-2', async () => void runs++, { sleep });
    await sleep(10);
    fail(new Error('boom'));
    await expect(first).rejects.toThrow('boom');
    expect(await second).toBe('ran');
    expect(runs).toBe(2);
    expect(store.claim('id-2', 'later')).toBe('done');
  });

  test('a handler that did not handle the message (a retry asked for) releases instead of committing', async () => {
    expect(await runClaimed(store, 'id-3', async () => undefined, { handled: () => false, sleep })).toBe('ran');
    expect(store.claim('id-3', 'later')).toBe('claimed');
  });

  test('a holder that outlives its lease: the waiting copy runs once the lease ended', async () => {
    store.claim('id-4', 'crashed-holder');
    let runs = 0;
    expect(await runClaimed(store, 'id-4', async () => void runs++, { sleep })).toBe('ran');
    expect(runs).toBe(1);
  });

  test('an id still held after a lease of waiting (another clock) is a ClaimHeldError, retried as any failure', async () => {
    const frozen = new InMemoryClaimStore({ now: () => 0, leaseMs: 1_000 });
    frozen.claim('id-5', 'holder');
    let runs = 0;
    await expect(runClaimed(frozen, 'id-5', async () => void runs++, { sleep })).rejects.toThrow(ClaimHeldError);
    expect(runs).toBe(0);
  });

  test('an id committed before is a duplicate; a missing id runs every time', async () => {
    let runs = 0;
    expect(await runClaimed(store, 'id-6', async () => void runs++)).toBe('ran');
    expect(await runClaimed(store, 'id-6', async () => void runs++)).toBe('duplicate');
    expect(await runClaimed(store, '', async () => void runs++)).toBe('ran');
    expect(await runClaimed(store, undefined, async () => void runs++)).toBe('ran');
    expect(runs).toBe(3);
  });
});

test('the module takes a claim store as its idempotency store', () => {
  const store: ClaimStore = new InMemoryClaimStore();
  expect(isClaimStore(store)).toBe(true);
  const resolved = resolveModuleOptions({
    serviceUrl: 'http://localhost:8080',
    topic: 'orders',
    idempotency: { store },
  });
  expect(resolved.server.idempotency?.store).toBe(store);
  expect(() =>
    resolveModuleOptions({
      serviceUrl: 'http://localhost:8080',
      topic: 'orders',
      idempotency: { store: { claim: () => 'claimed' } as unknown as ClaimStore },
    }),
  ).toThrow(BabelQueueOptionsError);
});
