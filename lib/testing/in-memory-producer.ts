import type { PulsarMessageId, PulsarProducer, PulsarProducerMessage } from '../pulsar/client-types.js';

/** Where a producer's sends go: the in-memory broker. */
export interface MessageStore {
  store(topic: string, message: PulsarProducerMessage): PulsarMessageId;
}

/** A producer of one topic: its sends are stored by the in-memory broker. */
export class InMemoryProducer implements PulsarProducer {
  private closed = false;
  constructor(
    private readonly topic: string,
    private readonly broker: MessageStore,
  ) {}
  async send(message: PulsarProducerMessage): Promise<PulsarMessageId> {
    if (this.closed) throw new Error(`Failed to send message: AlreadyClosed (producer of ${this.topic})`);
    return this.broker.store(this.topic, message);
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {
    this.closed = true;
  }
  getTopic(): string {
    return this.topic;
  }
  isConnected(): boolean {
    return !this.closed;
  }
}
