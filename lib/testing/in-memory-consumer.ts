import type { PulsarConsumer, PulsarMessage } from '../pulsar/client-types.js';
import { Delivery, type Pending } from './in-memory-message.js';
import type { Subscription, Waiter } from './in-memory-subscription.js';
import type { TestClock } from './test-clock.js';

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
