/**
 * Passes of a poller (the outbox relay, the schedule dispatcher): one at a time, whether asked for (`next()`, a
 * flush) or run by the background loop, which after each pass pauses `intervalMs` unless the pass says there is
 * more to do at once; `wake()` cuts a pause short.
 */
export class PassLoop<T> {
  private pass: Promise<T> | null = null;
  private loop: Promise<void> | null = null;
  private running = false;
  private wakeUp: (() => void) | null = null;

  constructor(
    /** One pass; a rejection is the pass's own to report (the loop goes on after the pause). */
    private readonly runPass: () => Promise<T>,
    /** Whether another pass should follow at once (a full batch). */
    private readonly busy: (outcome: T) => boolean,
    private readonly intervalMs: number,
  ) {}

  /** True between start() and stop(). */
  get started(): boolean {
    return this.running;
  }

  /** A pass after the one under way, if any: passes never overlap. */
  next(): Promise<T> {
    const previous = this.pass ?? Promise.resolve(undefined);
    const next = previous.catch(() => undefined).then(() => this.runPass());
    this.pass = next;
    return next;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Asks a pausing background loop for a pass now. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Ends the background loop after the pass under way (settled before this resolves). */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.loop;
    await this.pass?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let busy = false;
      try {
        busy = this.busy(await this.next());
      } catch {
        // reported by the pass itself, once per outage
      }
      if (this.running && !busy) await this.pause(this.intervalMs);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
