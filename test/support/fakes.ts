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
