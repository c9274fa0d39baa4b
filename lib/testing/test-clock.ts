/** A clock that follows real time, plus whatever `advance` added. */
export class TestClock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) takes a number of ms >= 0, got ${ms}`);
    this.offsetMs += ms;
  }
}
