import type { PulsarMessage, SubscriptionType } from '../pulsar/client-types.js';
import type { InMemoryConsumer } from './in-memory-consumer.js';
import type { Pending } from './in-memory-message.js';
import type { TestClock } from './test-clock.js';

/** A receive() waiting for a message. */
export interface Waiter {
  consumer: InMemoryConsumer;
  resolve(message: PulsarMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/** One subscription of a topic: its own copy of each message, waiting or handed to a consumer. */
export class Subscription {
  readonly pending: Pending[] = [];
  readonly unacked = new Map<InMemoryConsumer, Map<string, Pending>>();
  readonly waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly topic: string,
    readonly name: string,
    readonly type: SubscriptionType,
    private readonly clock: TestClock,
  ) {}

  get holdsDelayed(): boolean {
    return this.type === 'Shared' || this.type === 'KeyShared';
  }

  add(entry: Pending): void {
    this.pending.push(entry);
    this.serve();
  }

  /** Hands due messages to waiting receives; wakes itself up for the next one that is not due yet. */
  serve(): void {
    const now = this.clock.now();
    while (this.waiters.length > 0) {
      const index = this.pending.findIndex((entry) => entry.dueAt <= now);
      if (index < 0) break;
      const [entry] = this.pending.splice(index, 1);
      const waiter = this.waiters.shift()!;
      clearTimeout(waiter.timer);
      waiter.resolve(waiter.consumer.deliver(entry!));
    }
    this.scheduleNextDue(now);
  }

  take(): Pending | undefined {
    const now = this.clock.now();
    const index = this.pending.findIndex((entry) => entry.dueAt <= now);
    return index < 0 ? undefined : this.pending.splice(index, 1)[0];
  }

  private scheduleNextDue(now: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiters.length === 0) return;
    const next = Math.min(...this.pending.map((entry) => entry.dueAt));
    if (!Number.isFinite(next)) return;
    this.timer = setTimeout(() => this.serve(), Math.max(1, next - now));
    this.timer.unref();
  }

  stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
