import type { ConsumerLogger } from './hooks.js';

/**
 * The handlers of one topic that passed their time-out and still run (their messages settled, their work not): how
 * many, and a log line when one passes its time-out, when they reach the bound (the intake stalls), and when one ends.
 */
export class OverdueHandlers {
  count = 0;

  constructor(
    private readonly topic: string,
    private readonly max: () => number,
    private readonly logger: ConsumerLogger,
    /** One ended: a slot may be free again. */
    private readonly ended: () => void,
  ) {}

  track(urn: string, timeoutMs: number, stillRunning: Promise<void>): void {
    this.count += 1;
    const since = Date.now();
    this.logger.warn(
      `handler for ${urn} on ${this.topic} did not settle within ${timeoutMs} ms: counted as a failed attempt ` +
        `and its message settled; the handler still runs (${this.count} overdue on this topic)`,
    );
    if (this.count === this.max())
      this.logger.warn(
        `${this.count} handlers on ${this.topic} are past their time-out and still run (maxOverdueHandlers): ` +
          'no message is taken until one of them ends (status stalled)',
      );
    void stillRunning.then(() => {
      const wasFull = this.count >= this.max();
      this.count -= 1;
      this.logger.warn(
        `overdue handler for ${urn} on ${this.topic} ended ${Date.now() - since} ms after its time-out; ` +
          `its result was ignored${wasFull ? '; taking messages again' : ''}`,
      );
      this.ended();
    });
  }
}
