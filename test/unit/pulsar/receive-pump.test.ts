// The receive pump over a stand-in native consumer: one receive at a time (order kept), a promise from the
// listener holds the next receive, a closed consumer ends the pump, other failures are retried with a back-off;
// with a batch, a backlog is taken several at a time, only when the listener has room for all of them, and a batch
// that comes back short sends the pump back to single receives for a while.
import { jest } from '@jest/globals';
import { startReceivePump } from '../../../lib/pulsar/receive-pump.js';

/** A consumer whose receive() and batchReceive() calls are answered by the test, one at a time. */
function standInConsumer() {
  const waiting: Array<{ kind: 'one' | 'batch'; resolve(value: string | string[]): void; reject(error: Error): void }> =
    [];
  let calls = 0;
  let batchCalls = 0;
  const ask = <T extends string | string[]>(kind: 'one' | 'batch') =>
    new Promise<T>((resolve, reject) =>
      waiting.push({ kind, resolve: resolve as (value: string | string[]) => void, reject }),
    );
  return {
    get calls() {
      return calls;
    },
    get batchCalls() {
      return batchCalls;
    },
    get waiting() {
      return waiting.length;
    },
    /** What the receive under way is: one message, or a batch. */
    get asking() {
      return waiting[0]?.kind;
    },
    receive(): Promise<string> {
      calls += 1;
      return ask<string>('one');
    },
    batchReceive(): Promise<string[]> {
      batchCalls += 1;
      return ask<string[]>('batch');
    },
    answer(value: string | string[]) {
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

  describe('with a batch', () => {
    /** The taker's room, set by the test; roomFor() waits until the test lets it go. */
    function standInRoom(size: number, initial: number) {
      const room = {
        value: initial,
        asked: [] as number[],
        letGo: () => {},
        batch: {
          size,
          taker: {
            room: () => room.value,
            roomFor: (count: number) => {
              room.asked.push(count);
              return new Promise<void>((resolve) => (room.letGo = resolve));
            },
          },
        },
      };
      return room;
    }

    it('takes a batch once the taker has room for all of it, waits for that room, and keeps the order', async () => {
      const consumer = standInConsumer();
      const seen: string[] = [];
      const room = standInRoom(3, 3);
      const pump = startReceivePump(
        consumer,
        (message) => {
          seen.push(message);
          room.value -= 1;
          return undefined;
        },
        room.batch,
      );
      await turn();
      expect(consumer.asking).toBe('batch');
      consumer.answer(['a', 'b', 'c']);
      await turn();
      expect(consumer.asking).toBe('one'); // no room at all (a paused taker): one at a time
      room.value = 2; // 1 once 'd' is taken
      consumer.answer('d');
      await turn();
      expect(room.asked).toEqual([3]); // some room, not enough for a batch: the pump waits for it
      expect(consumer.waiting).toBe(0);
      room.value = 5;
      room.letGo();
      await turn();
      expect(consumer.asking).toBe('batch');
      consumer.answer(['e', 'f', 'g']);
      await turn();
      expect(seen).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
      pump.stop();
    });

    it('takes one message when the wait for room ends with none (the taker paused meanwhile)', async () => {
      const consumer = standInConsumer();
      const room = standInRoom(4, 2);
      const pump = startReceivePump(consumer, () => undefined, room.batch);
      await turn();
      expect(room.asked).toEqual([4]);
      room.value = 0;
      room.letGo();
      await turn();
      expect(consumer.asking).toBe('one');
      pump.stop();
    });

    it('after a short batch, goes back to single receives: 1, 2, 4 … before the next try, reset by a full one', async () => {
      const consumer = standInConsumer();
      const pump = startReceivePump(consumer, () => undefined, standInRoom(4, 100).batch);
      const kinds: string[] = [];
      const answerNext = async (full: boolean) => {
        await turn();
        kinds.push(consumer.asking!);
        consumer.answer(consumer.asking === 'batch' ? (full ? ['1', '2', '3', '4'] : ['1']) : 'x');
      };
      for (let i = 0; i < 9; i++) await answerNext(false);
      expect(kinds).toEqual(['batch', 'one', 'batch', 'one', 'one', 'batch', 'one', 'one', 'one']);
      kinds.length = 0;
      await answerNext(false); // the fourth single
      await answerNext(true); // the next try comes back full: batches from now on
      await answerNext(true);
      await answerNext(false); // short again: one single before the next try
      await answerNext(false);
      expect(kinds).toEqual(['one', 'batch', 'batch', 'batch', 'one']);
      pump.stop();
    });

    it('holds the rest of a batch while the listener holds, and hands nothing more over after stop()', async () => {
      const consumer = standInConsumer();
      const seen: string[] = [];
      let release: (() => void) | undefined;
      const pump = startReceivePump(
        consumer,
        (message) => {
          seen.push(message);
          return message === 'a' ? new Promise<void>((resolve) => (release = resolve)) : undefined;
        },
        standInRoom(3, 3).batch,
      );
      await turn();
      consumer.answer(['a', 'b', 'c']);
      await turn();
      expect(seen).toEqual(['a']);
      expect(consumer.waiting).toBe(0);
      pump.stop();
      release!();
      await turn();
      expect(seen).toEqual(['a']); // 'b' and 'c' are left unacknowledged, for redelivery
      expect(consumer.waiting).toBe(0);
    });

    it('ends when a batch receive finds the consumer closed', async () => {
      const consumer = standInConsumer();
      startReceivePump(consumer, () => undefined, standInRoom(2, 2).batch);
      await turn();
      consumer.fail(new Error('Failed to batch receive message: AlreadyClosed'));
      await turn();
      expect(consumer.waiting).toBe(0);
      expect(consumer.batchCalls).toBe(1);
      expect(consumer.calls).toBe(0);
    });
  });
});
