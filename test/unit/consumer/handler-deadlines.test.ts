// Handler time-outs share one timer per time-out length: deadlines expire in order, settled ones never fire.
import { jest } from '@jest/globals';
import { HandlerDeadlines, HandlerTimeoutError, withHandlerTimeout } from '../../../lib/consumer/handler-timeout.js';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('HandlerDeadlines', () => {
  it('expires each unsettled deadline at its own time, with one timer per length', () => {
    const deadlines = new HandlerDeadlines();
    const expired: string[] = [];
    deadlines.add(100, () => expired.push('a'));
    jest.advanceTimersByTime(30);
    const settleB = deadlines.add(100, () => expired.push('b'));
    jest.advanceTimersByTime(30);
    deadlines.add(100, () => expired.push('c'));
    deadlines.add(50, () => expired.push('short'));
    expect(jest.getTimerCount()).toBe(2);
    settleB();
    jest.advanceTimersByTime(40); // t = 100
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(10); // t = 110: the 50 ms one started at 60
    expect(expired).toEqual(['a', 'short']);
    jest.advanceTimersByTime(50); // t = 160: b (settled) is skipped, c expires
    expect(expired).toEqual(['a', 'short', 'c']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('times a handler out through the shared timers exactly as with its own timer', async () => {
    const deadlines = new HandlerDeadlines();
    const overdue: Array<Promise<void>> = [];
    let finish: () => void = () => {};
    const hung = withHandlerTimeout(
      new Promise<void>((resolve) => (finish = resolve)),
      'urn:babel:orders:created',
      1000,
      (stillRunning) => overdue.push(stillRunning),
      deadlines,
    );
    const quick = withHandlerTimeout(Promise.resolve(), 'urn:babel:orders:created', 1000, () => {}, deadlines);
    await expect(quick).resolves.toBeUndefined();
    jest.advanceTimersByTime(1000);
    await expect(hung).rejects.toBeInstanceOf(HandlerTimeoutError);
    expect(overdue).toHaveLength(1);
    finish();
    await expect(overdue[0]).resolves.toBeUndefined();
  });
});

describe('HandlerDeadlines memory', () => {
  it('keeps nothing once every handler settled, even long before the time-out', () => {
    const deadlines = new HandlerDeadlines();
    const settles = Array.from({ length: 5000 }, () => deadlines.add(60_000, () => {}));
    // Settled out of order (concurrency): nothing stays queued, and the timer goes away with the last one.
    for (let i = settles.length - 1; i >= 0; i -= 2) settles[i]!();
    for (let i = 0; i < settles.length; i += 2) settles[i]!();
    // The timer stays armed (unreferenced, so it holds no process open) and finds nothing when it fires.
    jest.advanceTimersByTime(60_000);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('HandlerDeadlines timer work', () => {
  it('arms no timer per handler when each settles before the next starts (concurrency 1)', () => {
    const arm = jest.spyOn(globalThis, 'setTimeout');
    const clear = jest.spyOn(globalThis, 'clearTimeout');
    const deadlines = new HandlerDeadlines();
    const expired: number[] = [];
    for (let i = 0; i < 1000; i++) {
      deadlines.add(60_000, () => expired.push(i))();
      jest.advanceTimersByTime(10);
    }
    // One timer for the whole run: left armed as the queue empties, only re-armed when it fires.
    expect(arm).toHaveBeenCalledTimes(1);
    expect(clear).not.toHaveBeenCalled();
    const hung = deadlines.add(60_000, () => expired.push(-1));
    jest.advanceTimersByTime(60_000);
    expect(expired).toEqual([-1]);
    hung();
    arm.mockRestore();
    clear.mockRestore();
  });

  it('expires a deadline added after the queue emptied at its own time, not at the earlier timer', () => {
    const deadlines = new HandlerDeadlines();
    const expired: string[] = [];
    deadlines.add(100, () => expired.push('settled'))();
    jest.advanceTimersByTime(60);
    deadlines.add(100, () => expired.push('late'));
    jest.advanceTimersByTime(40); // the earlier timer fires at 100 and finds nothing due
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(59);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1); // 160
    expect(expired).toEqual(['late']);
  });
});
