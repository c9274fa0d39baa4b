import { BabelQueueError } from '../envelope/index.js';

/** A handler did not settle within its time-out; counted as a failed attempt. */
export class HandlerTimeoutError extends BabelQueueError {
  readonly urn: string;
  readonly timeoutMs: number;

  constructor(urn: string, timeoutMs: number) {
    super(`handler for ${urn} did not settle within ${timeoutMs} ms (time-out, counted as a failed attempt)`);
    this.name = 'HandlerTimeoutError';
    this.urn = urn;
    this.timeoutMs = timeoutMs;
  }
}

interface Deadline {
  due: number;
  /** Dropped once settled, so a settled deadline keeps nothing of its handler alive. */
  expire: (() => void) | null;
}

/** The deadlines of one time-out length, in start order (so in due order), and its one timer. */
class DeadlineQueue {
  private deadlines: Deadline[] = [];
  private head = 0;
  private settledBehindHead = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly now: () => number) {}

  add(timeoutMs: number, expire: () => void): () => void {
    const deadline: Deadline = { due: this.now() + timeoutMs, expire };
    this.deadlines.push(deadline);
    // A timer left armed when the queue emptied is due no later than this deadline (one length, added in order):
    // it is only held again; its firing arms the next.
    if (!this.timer) this.arm();
    else if (this.idle) this.hold();
    return () => {
      if (deadline.expire === null) return;
      deadline.expire = null;
      this.settledBehindHead += 1;
      this.dropSettled();
    };
  }

  /** Drops settled deadlines at the head; compacts when most of the rest are settled too. */
  private dropSettled(): void {
    const { deadlines } = this;
    while (this.head < deadlines.length && deadlines[this.head]!.expire === null) {
      this.head += 1;
      this.settledBehindHead -= 1;
    }
    const live = deadlines.length - this.head;
    if (this.head > 1024 || (this.settledBehindHead > 1024 && this.settledBehindHead * 2 > live)) {
      this.deadlines = deadlines.slice(this.head).filter((deadline) => deadline.expire !== null);
      this.head = 0;
      this.settledBehindHead = 0;
    }
    if (this.head === this.deadlines.length) {
      this.deadlines = [];
      this.head = 0;
      // Kept armed but no longer holding the process open: the next handler (at c1, the very next message) would
      // otherwise clear and arm a timer each time the queue empties.
      if (this.timer && !this.idle) this.release();
    }
  }

  /** The armed timer no longer keeps the process alive: no deadline waits for it. */
  private idle = false;

  private release(): void {
    this.idle = true;
    this.timer?.unref();
  }

  private hold(): void {
    this.idle = false;
    this.timer?.ref();
  }

  private arm(): void {
    const first = this.deadlines[this.head];
    if (!first) {
      this.timer = null;
      return;
    }
    this.idle = false;
    this.timer = setTimeout(() => this.fire(), Math.max(0, first.due - this.now()));
  }

  private fire(): void {
    const now = this.now();
    const { deadlines } = this;
    while (this.head < deadlines.length && deadlines[this.head]!.due <= now) {
      const deadline = deadlines[this.head]!;
      this.head += 1;
      const expire = deadline.expire;
      deadline.expire = null;
      if (expire) expire();
      else this.settledBehindHead -= 1;
    }
    this.timer = null;
    this.dropSettled();
    if (!this.timer && this.head < this.deadlines.length) this.arm();
  }
}

/**
 * The time-outs of one consumer's handlers with one timer per time-out length instead of one per message: handlers
 * of one length start in order, so their deadlines come in order and only the earliest needs a timer.
 */
export class HandlerDeadlines {
  private readonly queues = new Map<number, DeadlineQueue>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Calls `expire` after `timeoutMs` unless the returned function (settle) is called first. */
  add(timeoutMs: number, expire: () => void): () => void {
    let queue = this.queues.get(timeoutMs);
    if (!queue) this.queues.set(timeoutMs, (queue = new DeadlineQueue(this.now)));
    return queue.add(timeoutMs, expire);
  }
}

/**
 * Waits for `work` at most `timeoutMs` (0 = no limit). On a time-out it rejects with HandlerTimeoutError and
 * hands the still-running work to `onOverdue`, so its owner can count and report it until it ends: a hung
 * handler must neither hold its message forever nor disappear from view. `deadlines` shares one timer between
 * the handlers of a consumer; without it each call has its own.
 */
export function withHandlerTimeout(
  work: Promise<void>,
  urn: string,
  timeoutMs: number,
  onOverdue: (stillRunning: Promise<void>) => void,
  deadlines?: HandlerDeadlines,
): Promise<void> {
  if (!(timeoutMs > 0)) return work;
  return new Promise<void>((resolve, reject) => {
    let timedOut = false;
    const expire = () => {
      timedOut = true;
      reject(new HandlerTimeoutError(urn, timeoutMs));
      onOverdue(
        work.then(
          () => undefined,
          () => undefined,
        ),
      );
    };
    let settle: () => void;
    if (deadlines) settle = deadlines.add(timeoutMs, expire);
    else {
      const timer = setTimeout(expire, timeoutMs);
      settle = () => clearTimeout(timer);
    }
    work.then(
      () => {
        if (timedOut) return;
        settle();
        resolve();
      },
      (error: unknown) => {
        if (timedOut) return;
        settle();
        reject(error as Error);
      },
    );
  });
}
