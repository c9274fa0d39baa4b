import type { ConsumerLogger, SettledEvent } from '../../consumer/index.js';
import type { RunningSubscription } from './subscription-runner.js';

/**
 * `stalled`: connected, but some handler passed its time-out and still runs (see describe()). `paused`: connected,
 * and every consumer is paused (see pause(); describe() tells which are when only some are).
 */
export type BabelServerStatus = 'connected' | 'disconnected' | 'reconnecting' | 'stalled' | 'paused' | 'closed';

/** Events of `server.on(...)`. */
export type BabelServerEvents = {
  /** Every delivery once settled: acknowledged, retried, dead-lettered, negatively acknowledged, dropped. */
  settled: (event: SettledEvent) => void;
  /** An error outside any one message (a failing receive, a consumer that cannot reconnect). */
  error: (error: Error) => void;
};

const STATUS_POLL_MS = 1000;

export interface StatusMonitorDeps {
  running(): readonly RunningSubscription[];
  /** The server's own subscription: a consumer of another is named with its subscription in the logs. */
  defaultSubscription: string;
  logger: ConsumerLogger;
  publish(status: BabelServerStatus): void;
}

/**
 * The server's status from its consumers, polled each second once consuming started: one log line when a
 * consumer's connection drops and one when it is back.
 */
export class StatusMonitor {
  private timer: NodeJS.Timeout | null = null;
  private last: BabelServerStatus | null = null;
  private readonly connections = new ConnectionWatch();

  constructor(private readonly deps: StatusMonitorDeps) {}

  /** Publishes `status` unless it is the current one. */
  set(status: BabelServerStatus): void {
    if (this.last === status) return;
    this.last = status;
    this.deps.publish(status);
  }

  start(): void {
    this.set('connected');
    this.timer = setInterval(() => this.poll(), STATUS_POLL_MS);
    this.timer.unref();
    this.poll();
  }

  /** The status at once (after pause() / resume()); the poll would tell within a second. */
  refresh(): void {
    if (this.timer !== null) this.poll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private poll(): void {
    const running = this.deps.running();
    const states = running.map(({ consumer }) => consumer.isConnected());
    const now = Date.now();
    running.forEach(({ readsFrom, subscription }, index) =>
      this.report(
        subscription.name === this.deps.defaultSubscription
          ? readsFrom
          : `${readsFrom} (subscription ${subscription.name})`,
        states[index]!,
        now,
      ),
    );
    if (states.includes(false)) this.set('reconnecting');
    else if (running.some(({ consumer }) => consumer.overdueCount > 0)) this.set('stalled');
    else if (running.length > 0 && running.every(({ consumer }) => consumer.isPaused)) this.set('paused');
    else this.set('connected');
  }

  private report(topic: string, connected: boolean, now: number): void {
    const change = this.connections.observe(topic, connected, now);
    if (change?.kind === 'down') {
      this.deps.logger.warn(
        `consumer of ${topic} lost its broker connection; reconnecting (messages wait on the broker)`,
      );
    } else if (change?.kind === 'up') {
      this.deps.logger.log(`consumer of ${topic} reconnected after ${Math.round(change.downForMs / 100) / 10} s`);
    }
  }
}

/** What to log about one consumer's connection after a status poll (pure). */
export type ConnectionChange =
  { kind: 'down'; topic: string } | { kind: 'up'; topic: string; downForMs: number } | null;

/**
 * Remembers, per topic, since when a consumer is disconnected, so that each outage is reported exactly twice:
 * once when it starts and once when it ends, with how long it lasted.
 */
export class ConnectionWatch {
  private readonly downSince = new Map<string, number>();

  observe(topic: string, connected: boolean, now: number): ConnectionChange {
    const since = this.downSince.get(topic);
    if (!connected) {
      if (since !== undefined) return null;
      this.downSince.set(topic, now);
      return { kind: 'down', topic };
    }
    if (since === undefined) return null;
    this.downSince.delete(topic);
    return { kind: 'up', topic, downForMs: now - since };
  }
}
