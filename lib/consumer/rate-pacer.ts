// A per-instance rate limit (docs/retries.md#rate-limit): messages start at most `maxPerSecond` a second, spaced
// evenly (a token bucket that holds one token), so a backlog is never handled in bursts of a second's worth.

/** Hands out start times `1000 / maxPerSecond` ms apart, one waiter at a time. Pure but for its clock and timer. */
export class RatePacer {
  private readonly intervalMs: number;
  /** The earliest start time of the next message (epoch ms). */
  private next = Number.NEGATIVE_INFINITY;
  /** Messages waiting for their start, in arrival order; one timer serves them all. */
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly maxPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.intervalMs = 1000 / maxPerSecond;
  }

  /** Takes the next start time; returns how long to wait for it, ms (0: at once). */
  reserve(): number {
    const now = this.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    return at - now;
  }

  /** Resolves at this message's start time. */
  wait(): Promise<void> {
    if (this.waiting.length === 0 && this.take()) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.arm();
    });
  }

  /**
   * Takes the start that is due now, if one is. The next is spaced from this one's own time, so a timer a little
   * late does not lower the rate; after a stall of more than one interval (a busy event loop) it is spaced from
   * now: the starts the stall delayed are not caught up in a burst.
   */
  private take(): boolean {
    const now = this.now();
    if (now < this.next) return false;
    this.next = (now - this.next < this.intervalMs ? this.next : now) + this.intervalMs;
    return true;
  }

  /** Starts the waiters that are due, then sleeps until the next start time. */
  private arm(): void {
    if (this.timer !== null) return;
    while (this.waiting.length > 0 && this.take()) this.waiting.shift()!();
    if (this.waiting.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.arm();
      },
      Math.max(1, this.next - this.now()),
    );
  }
}
