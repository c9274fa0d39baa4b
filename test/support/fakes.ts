// In-memory fakes of the Pulsar client surface, for edge cases the real broker cannot stage on demand.
import type {
  PulsarConsumer,
  PulsarMessage,
  PulsarProducer,
  PulsarProducerMessage,
} from '../../lib/pulsar/client-types.js';

export class FakeProducer implements PulsarProducer {
  readonly sent: PulsarProducerMessage[] = [];
  failWith: Error | null = null;
  closed = false;
  constructor(
    private readonly topic: string,
    private readonly journal: string[] = [],
  ) {}
  async send(message: PulsarProducerMessage) {
    if (this.failWith) throw this.failWith;
    this.sent.push(message);
    this.journal.push(`send:${this.topic}`);
    return { toString: () => `id-${this.sent.length}` };
  }
  async flush() {}
  async close() {
    this.closed = true;
  }
  getTopic() {
    return this.topic;
  }
}

export class FakeConsumer implements PulsarConsumer {
  readonly acked: PulsarMessage[] = [];
  readonly nacked: PulsarMessage[] = [];
  closed = false;
  ackFailure: Error | null = null;
  constructor(private readonly journal: string[] = []) {}
  async receive(): Promise<PulsarMessage> {
    throw new Error('Failed to receive message: TimeOut');
  }
  async acknowledge(message: PulsarMessage) {
    if (this.ackFailure) throw this.ackFailure;
    this.acked.push(message);
    this.journal.push('ack');
  }
  negativeAcknowledge(message: PulsarMessage) {
    this.nacked.push(message);
    this.journal.push('nack');
  }
  async close() {
    this.closed = true;
  }
  async unsubscribe() {}
}

/**
 * A consumer whose receive() answers from `queue`, or waits for push() (never with a time-out) until close(), as the
 * real clients do; it counts the receives, and those given a time-out (the library must give none).
 */
export class QueueConsumer extends FakeConsumer {
  readonly queue: PulsarMessage[] = [];
  receives = 0;
  timedReceives = 0;
  private waiting: { resolve(message: PulsarMessage): void; reject(error: Error): void } | null = null;
  override receive(timeoutMs?: number): Promise<PulsarMessage> {
    this.receives += 1;
    if (timeoutMs !== undefined) this.timedReceives += 1;
    if (this.closed) return Promise.reject(new Error('Failed to receive message: AlreadyClosed'));
    const next = this.queue.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }
  /** Adds messages; a receive under way gets the first. */
  push(...messages: PulsarMessage[]): void {
    this.queue.push(...messages);
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting && this.queue.length > 0) waiting.resolve(this.queue.shift()!);
  }
  override async close() {
    await super.close();
    this.waiting?.reject(new Error('Failed to receive message: AlreadyClosed'));
    this.waiting = null;
  }
}
