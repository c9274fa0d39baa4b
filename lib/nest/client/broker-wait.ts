import type { ConsumerLogger } from '../../consumer/index.js';

/**
 * Retries a start that failed because the broker did not answer (`brokerAtStart: 'optional'`): the app is up
 * meanwhile, and the first failure and the eventual success are each logged once.
 */
export interface BrokerWaitOptions {
  /** Tries to start; rejects while the broker does not answer. */
  attempt(): Promise<void>;
  onWaiting(error: Error): void;
  onConnected(waitedMs: number): void;
  /** First and longest pause between attempts, ms. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Retries `attempt` (subscribing everything) until the broker answers: one line when waiting begins, one when
 * connected. `topics` names what waits, for those lines.
 */
export function waitForBroker(
  topics: string,
  log: ConsumerLogger,
  error: unknown,
  attempt: () => Promise<void>,
): BrokerWait {
  return new BrokerWait(
    {
      attempt,
      onWaiting: (first) =>
        log.warn(
          `the broker did not answer at start (${first.message}); the app runs without consuming ${topics} and ` +
            'subscribes once the broker answers (health reports the consumers disconnected until then)',
        ),
      onConnected: (waitedMs) =>
        log.log(`the broker answered after ${Math.round(waitedMs / 100) / 10} s: consuming ${topics}`),
    },
    error instanceof Error ? error : new Error(String(error)),
  );
}

export class BrokerWait {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly since = Date.now();
  private delayMs: number;
  private readonly maxDelayMs: number;

  constructor(
    private readonly options: BrokerWaitOptions,
    firstError: Error,
  ) {
    this.delayMs = options.initialDelayMs ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 10_000;
    options.onWaiting(firstError);
    this.schedule();
  }

  private current: Promise<void> | null = null;

  /** Stops retrying (on close), once an attempt under way has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  // Not unref'd: while it waits for the broker, this timer is what keeps a microservice process alive.
  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.tryOnce();
    }, this.delayMs);
    this.delayMs = Math.min(this.delayMs * 2, this.maxDelayMs);
  }

  private async tryOnce(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    try {
      await this.options.attempt();
    } catch {
      this.schedule();
      return;
    }
    if (!this.stopped) this.options.onConnected(Date.now() - this.since);
  }
}
