import type { PulsarConsumer, PulsarMessage, SubscriptionType } from '../pulsar/client-types.js';
import { Delivery, type Pending } from './in-memory-message.js';
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

/** A consumer of one subscription of the in-memory broker. */
export class InMemoryConsumer implements PulsarConsumer {
  private closed = false;
  private readonly inFlight = new Map<string, Pending>();

  constructor(
    private readonly subscription: Subscription,
    private readonly nackDelayMs: number,
    private readonly clock: TestClock,
    private readonly onClose: (consumer: InMemoryConsumer) => void,
  ) {
    subscription.unacked.set(this, this.inFlight);
  }

  receive(timeoutMs?: number): Promise<PulsarMessage> {
    if (this.closed) return Promise.reject(new Error('Failed to receive message: AlreadyClosed'));
    const ready = this.subscription.take();
    if (ready) return Promise.resolve(this.deliver(ready));
    return new Promise<PulsarMessage>((resolve, reject) => {
      const waiter: Waiter = { consumer: this, resolve, reject, timer: undefined };
      if (timeoutMs !== undefined && timeoutMs > 0) {
        waiter.timer = setTimeout(() => {
          this.forget(waiter);
          reject(new Error('Failed to receive message: TimeOut'));
        }, timeoutMs);
      }
      this.subscription.waiters.push(waiter);
      this.subscription.serve();
    });
  }

  async acknowledge(message: PulsarMessage): Promise<void> {
    if (this.closed) throw new Error('Failed to acknowledge: AlreadyClosed');
    this.inFlight.delete(message.getMessageId().toString());
  }

  negativeAcknowledge(message: PulsarMessage): void {
    const key = message.getMessageId().toString();
    const entry = this.inFlight.get(key);
    if (!entry) return;
    this.inFlight.delete(key);
    this.subscription.add({
      ...entry,
      redeliveryCount: entry.redeliveryCount + 1,
      dueAt: this.clock.now() + this.nackDelayMs,
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.subscription.waiters.filter((w) => w.consumer === this)) {
      this.forget(waiter);
      waiter.reject(new Error('Failed to receive message: AlreadyClosed'));
    }
    // What this consumer had not acknowledged goes back to the subscription, ahead of newer messages.
    this.subscription.pending.unshift(...this.inFlight.values());
    this.inFlight.clear();
    this.subscription.unacked.delete(this);
    this.onClose(this);
    this.subscription.serve();
  }

  async unsubscribe(): Promise<void> {
    await this.close();
  }

  isConnected(): boolean {
    return !this.closed;
  }

  private forget(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const index = this.subscription.waiters.indexOf(waiter);
    if (index >= 0) this.subscription.waiters.splice(index, 1);
  }

  /** @internal Hands a message to this consumer: unacknowledged until it acknowledges it. */
  deliver(entry: Pending): Delivery {
    this.inFlight.set(entry.id.toString(), entry);
    return new Delivery(entry.stored, entry.id, entry.redeliveryCount);
  }
}
