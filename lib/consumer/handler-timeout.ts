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
  expire: () => void;
  settled: boolean;
}

/**
 * The time-outs of one consumer's handlers with one timer per time-out length instead of one per message: handlers
 * of one length start in order, so their deadlines come in order and only the earliest needs a timer. A settled
 * handler's deadline is dropped when the timer reaches it.
 */
export class HandlerDeadlines {
  private readonly queues = new Map<number, { deadlines: Deadline[]; timer: NodeJS.Timeout | null }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Calls `expire` after `timeoutMs` unless the returned function (settle) is called first. */
  add(timeoutMs: number, expire: () => void): () => void {
    let queue = this.queues.get(timeoutMs);
    if (!queue) this.queues.set(timeoutMs, (queue = { deadlines: [], timer: null }));
    const deadline: Deadline = { due: this.now() + timeoutMs, expire, settled: false };
    queue.deadlines.push(deadline);
    if (!queue.timer) this.arm(timeoutMs, queue);
    return () => {
      deadline.settled = true;
    };
  }

  private arm(timeoutMs: number, queue: { deadlines: Deadline[]; timer: NodeJS.Timeout | null }): void {
    const { deadlines } = queue;
    while (deadlines.length > 0 && deadlines[0]!.settled) deadlines.shift();
    const first = deadlines[0];
    if (!first) {
      queue.timer = null;
      return;
    }
    queue.timer = setTimeout(
      () => {
        const now = this.now();
        while (deadlines.length > 0 && (deadlines[0]!.settled || deadlines[0]!.due <= now)) {
          const deadline = deadlines.shift()!;
          if (!deadline.settled) deadline.expire();
        }
        this.arm(timeoutMs, queue);
      },
      Math.max(0, first.due - this.now()),
    );
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
