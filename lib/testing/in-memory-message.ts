import type { PulsarMessage, PulsarMessageId } from '../pulsar/client-types.js';

/** One message as the in-memory broker stored it. */
export interface StoredMessage {
  /** The full topic name (`persistent://public/default/orders`). */
  readonly topic: string;
  /** The message id in the library's text form, `(ledger,entry,-1,-1)`. */
  readonly messageId: string;
  readonly data: Buffer;
  readonly properties: Readonly<Record<string, string>>;
  readonly partitionKey: string;
  readonly orderingKey: string;
  /** Epoch ms (real time) when it was published. */
  readonly publishedAt: number;
  /** The delay it was sent with, ms (0 = none). */
  readonly delayMs: number;
}

export class MessageId implements PulsarMessageId {
  constructor(
    readonly ledger: number,
    readonly entry: number,
  ) {}
  toString(): string {
    return `(${this.ledger},${this.entry},-1,-1)`;
  }
}

/** One delivery of a stored message to one subscription. */
export class Delivery implements PulsarMessage {
  constructor(
    readonly stored: StoredMessage,
    private readonly id: MessageId,
    readonly redeliveryCount: number,
  ) {}
  getData(): Buffer {
    return Buffer.from(this.stored.data);
  }
  getProperties(): Record<string, string> {
    return { ...this.stored.properties };
  }
  getRedeliveryCount(): number {
    return this.redeliveryCount;
  }
  getMessageId(): PulsarMessageId {
    return this.id;
  }
  getTopicName(): string {
    return this.stored.topic;
  }
  getPublishTimestamp(): number {
    return this.stored.publishedAt;
  }
  getPartitionKey(): string {
    return this.stored.partitionKey;
  }
  getOrderingKey(): string {
    return this.stored.orderingKey;
  }
}

/** A stored message waiting in one subscription, or handed to one of its consumers. */
export interface Pending {
  stored: StoredMessage;
  id: MessageId;
  redeliveryCount: number;
  /** Clock time at which it may be delivered. */
  dueAt: number;
}
