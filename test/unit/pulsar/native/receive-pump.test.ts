// The receive pump over a stand-in native consumer: one receive at a time (order kept), a promise from the
// listener holds the next receive, a closed consumer ends the pump, other failures are retried with a back-off.
import { jest } from '@jest/globals';
import { startReceivePump } from '../../../../lib/pulsar/native/receive-pump.js';

/** A consumer whose receive() calls are answered by the test, one at a time. */
function standInConsumer() {
  const waiting: Array<{ resolve(value: string): void; reject(error: Error): void }> = [];
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    get waiting() {
      return waiting.length;
    },
    receive(): Promise<string> {
      calls += 1;
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    answer(value: string) {
      waiting.shift()!.resolve(value);
    },
    fail(error: Error) {
      waiting.shift()!.reject(error);
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('startReceivePump', () => {
  it('asks for one message at a time and hands them over in order', async () => {
    const consumer = standInConsumer();
    const seen: string[] = [];
    const pump = startReceivePump(consumer, (message) => {
      seen.push(message);
      return undefined;
    });
    for (const value of ['a', 'b', 'c']) {
      await turn();
      expect(consumer.waiting).toBe(1);
      consumer.answer(value);
    }
    await turn();
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(consumer.calls).toBe(4);
    pump.stop();
  });

  it('holds the next receive until the promise the listener returned settles (even when it rejects)', async () => {
    const consumer = standInConsumer();
    let release: (() => void) | undefined;
    let fail: ((error: Error) => void) | undefined;
    const results: Array<Promise<void> | undefined> = [
      new Promise<void>((resolve) => (release = resolve)),
      new Promise<void>((_resolve, reject) => (fail = reject)),
      undefined,
    ];
    const seen: string[] = [];
    const pump = startReceivePump(consumer, (message) => {
      seen.push(message);
      return results.shift();
    });
    await turn();
    consumer.answer('a');
    await turn();
    expect(consumer.waiting).toBe(0); // 'a' is still being waited for
    release!();
    await turn();
    consumer.answer('b');
    await turn();
    expect(consumer.waiting).toBe(0);
    fail!(new Error('listener failed'));
    await turn();
    expect(consumer.waiting).toBe(1);
    consumer.answer('c');
    await turn();
    expect(seen).toEqual(['a', 'b', 'c']);
    pump.stop();
  });

  it('ends when the consumer is closed, and hands over nothing received after stop()', async () => {
    const consumer = standInConsumer();
    const seen: string[] = [];
    const pump = startReceivePump(consumer, (message) => {
      seen.push(message);
      return undefined;
    });
    await turn();
    pump.stop();
    consumer.answer('late'); // the receive under way as the consumer closed: left for redelivery
    await turn();
    expect(seen).toEqual([]);
    expect(consumer.waiting).toBe(0);

    const closedUnderneath = standInConsumer();
    startReceivePump(closedUnderneath, () => undefined);
    await turn();
    closedUnderneath.fail(new Error('Failed to receive message: AlreadyClosed'));
    await turn();
    expect(closedUnderneath.waiting).toBe(0);
    expect(closedUnderneath.calls).toBe(1);
  });

  it('goes on after a listener that throws', async () => {
    const consumer = standInConsumer();
    const seen: string[] = [];
    const pump = startReceivePump(consumer, (message) => {
      seen.push(message);
      if (message === 'a') throw new Error('listener failed');
      return undefined;
    });
    await turn();
    consumer.answer('a');
    await turn();
    consumer.answer('b');
    await turn();
    expect(seen).toEqual(['a', 'b']);
    expect(consumer.waiting).toBe(1);
    pump.stop();
  });

  it('retries after any other failure, backing off', async () => {
    jest.useFakeTimers();
    try {
      const consumer = standInConsumer();
      const seen: string[] = [];
      const pump = startReceivePump(consumer, (message) => {
        seen.push(message);
        return undefined;
      });
      await Promise.resolve();
      consumer.fail(new Error('Failed to receive message: ConnectError'));
      await jest.advanceTimersByTimeAsync(199);
      expect(consumer.waiting).toBe(0); // backing off (200 ms after the first failure)
      await jest.advanceTimersByTimeAsync(1);
      expect(consumer.waiting).toBe(1);
      consumer.answer('after the failure');
      await jest.advanceTimersByTimeAsync(0);
      expect(seen).toEqual(['after the failure']);
      pump.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
