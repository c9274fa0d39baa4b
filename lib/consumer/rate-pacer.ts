// A per-instance rate limit (docs/retries.md#rate-limit): messages start at most `maxPerSecond` a second, spaced
// evenly (a token bucket that holds one token), so a backlog is never handled in bursts of a second's worth.

/** Reserves start times `1000 / maxPerSecond` ms apart. Pure but for the clock it is given. */
export class RatePacer {
  private readonly intervalMs: number;
  /** The earliest start time of the next message (epoch ms). */
  private next = Number.NEGATIVE_INFINITY;

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
    const delayMs = this.reserve();
    return delayMs <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}
