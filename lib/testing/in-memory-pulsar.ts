/**
 * A Pulsar broker in the test process: it implements the client surface the library uses (client-types.ts), so
 * the real server, settlement, producer pool and publisher run on it unchanged, with no broker to start.
 *
 * It keeps the broker behaviours settlement depends on: every subscription of a topic gets its own copy of each
 * message; a Shared or Key_Shared subscription holds a delayed message until it is due (Exclusive and Failover
 * deliver at once, as Pulsar does); a negative acknowledgement brings the message back after the subscription's
 * redelivery delay with its redelivery count + 1; what a closing consumer had not acknowledged goes back to its
 * subscription. New subscriptions start at the end of the topic unless `subscriptionInitialPosition: 'Earliest'`.
 * Not modelled: partitions, key-ordered dispatch, batching, retention limits, authentication.
 *
 * Time: delays and redelivery delays run on a clock that follows real time and can be moved forward with
 * `advance(ms)`, so a test of a one-minute retry does not wait a minute.
 */
import { normalizeTopic } from '../pulsar/websocket/topic.js';
import type {
  PulsarClientLike,
  PulsarConsumer,
  PulsarConsumerConfig,
  PulsarMessage,
  PulsarMessageId,
  PulsarProducer,
  PulsarProducerConfig,
  PulsarProducerMessage,
  SubscriptionType,
} from '../pulsar/client-types.js';

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

/** The Pulsar default: a negatively acknowledged message comes back after a minute. */
const DEFAULT_NACK_REDELIVER_MS = 60_000;

class MessageId implements PulsarMessageId {
  constructor(
    readonly ledger: number,
    readonly entry: number,
  ) {}
  toString(): string {
    return `(${this.ledger},${this.entry},-1,-1)`;
  }
}

/** One delivery of a stored message to one subscription. */
class Delivery implements PulsarMessage {
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

interface Pending {
  stored: StoredMessage;
  id: MessageId;
  redeliveryCount: number;
  /** Clock time at which it may be delivered. */
  dueAt: number;
}

interface Waiter {
  consumer: InMemoryConsumer;
  resolve(message: PulsarMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/** A clock that follows real time, plus whatever `advance` added. */
export class TestClock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) takes a number of ms >= 0, got ${ms}`);
    this.offsetMs += ms;
  }
}

class Subscription {
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

class InMemoryConsumer implements PulsarConsumer {
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

class InMemoryProducer implements PulsarProducer {
  private closed = false;
  constructor(
    private readonly topic: string,
    private readonly broker: InMemoryPulsar,
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

function topicName(topic: string): string {
  return normalizeTopic(topic);
}

/**
 * An in-memory Pulsar client and broker in one. Give it to the module (`BabelQueueModule.forRoot({ client })`,
 * or `useInMemoryPulsar(testingModuleBuilder, pulsar)` to replace the client of an existing AppModule).
 */
export class InMemoryPulsar implements PulsarClientLike {
  readonly clock = new TestClock();
  private readonly topics = new Map<string, { ledger: number; messages: StoredMessage[] }>();
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly consumers = new Set<InMemoryConsumer>();
  private closed = false;
  private down = false;

  /**
   * Simulates a broker that does not answer (`false`) or answers again (`true`): meanwhile new producers and
   * subscriptions are refused and sends fail, as against a stopped broker. Messages already stored stay.
   */
  setAvailable(available: boolean): void {
    this.down = !available;
  }

  async createProducer(config: PulsarProducerConfig): Promise<PulsarProducer> {
    this.assertOpen();
    this.assertUp(`create a producer on ${config.topic}`);
    return new InMemoryProducer(topicName(config.topic), this);
  }

  async subscribe(config: PulsarConsumerConfig): Promise<PulsarConsumer> {
    this.assertOpen();
    this.assertUp(`subscribe to ${config.topic}`);
    const topic = topicName(config.topic);
    const key = `${topic}\u0000${config.subscription}`;
    let subscription = this.subscriptions.get(key);
    const type = config.subscriptionType ?? 'Exclusive';
    if (!subscription) {
      subscription = new Subscription(topic, config.subscription, type, this.clock);
      this.subscriptions.set(key, subscription);
      if (config.subscriptionInitialPosition === 'Earliest') {
        const log = this.topics.get(topic);
        for (const stored of log?.messages ?? []) subscription.add(this.pendingFor(stored, subscription, log!.ledger));
      }
    } else if (subscription.type !== type) {
      throw new Error(
        `Failed to create consumer: ConsumerBusy (subscription ${config.subscription} on ${topic} is ${subscription.type}, not ${type})`,
      );
    } else if (type === 'Exclusive' && subscription.unacked.size > 0) {
      throw new Error(`Failed to create consumer: ConsumerBusy (${config.subscription} on ${topic} is Exclusive)`);
    }
    const consumer = new InMemoryConsumer(
      subscription,
      config.nAckRedeliverTimeoutMs ?? DEFAULT_NACK_REDELIVER_MS,
      this.clock,
      (closed) => this.consumers.delete(closed),
    );
    this.consumers.add(consumer);
    return consumer;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.close()));
    for (const subscription of this.subscriptions.values()) subscription.stopTimer();
  }

  /** Moves the clock forward: delayed messages and negatively acknowledged ones due by then are delivered. */
  advance(ms: number): void {
    this.clock.advance(ms);
    for (const subscription of this.subscriptions.values()) subscription.serve();
  }

  /** Every message published to `topic` so far (the app's publishes, retry copies, dead-letter records), in order. */
  published(topic: string): StoredMessage[] {
    return [...(this.topics.get(topicName(topic))?.messages ?? [])];
  }

  /**
   * The full names of the topics of `namespace` (`tenant/namespace`) that something was published to, as the
   * broker's admin API lists them: what a `topicsPattern` handler discovers.
   */
  async listTopics(namespace: string): Promise<string[]> {
    const prefix = `persistent://${namespace}/`;
    return [...this.topics.keys()].filter((topic) => topic.startsWith(prefix));
  }

  /** Messages of a subscription not acknowledged yet (waiting, delayed, or being handled). */
  backlog(topic: string, subscription = 'babelqueue'): number {
    const found = this.subscriptions.get(`${topicName(topic)}\u0000${subscription}`);
    if (!found) return 0;
    let unacked = 0;
    for (const held of found.unacked.values()) unacked += held.size;
    return found.pending.length + unacked;
  }

  /** @internal The producers' write: stores the message and hands a copy to every subscription of the topic. */
  store(topic: string, message: PulsarProducerMessage): MessageId {
    this.assertOpen();
    this.assertUp(`send to ${topic}`);
    let log = this.topics.get(topic);
    if (!log) {
      log = { ledger: this.topics.size + 1, messages: [] };
      this.topics.set(topic, log);
    }
    const now = Date.now();
    const delayMs =
      message.deliverAt !== undefined
        ? Math.max(0, message.deliverAt - now)
        : message.deliverAfter !== undefined
          ? Math.max(0, message.deliverAfter)
          : 0;
    const stored: StoredMessage = {
      topic,
      messageId: new MessageId(log.ledger, log.messages.length).toString(),
      data: Buffer.from(message.data),
      properties: { ...message.properties },
      partitionKey: message.partitionKey ?? '',
      orderingKey: message.orderingKey ?? '',
      publishedAt: now,
      delayMs,
    };
    log.messages.push(stored);
    for (const subscription of this.subscriptions.values()) {
      if (subscription.topic === topic) subscription.add(this.pendingFor(stored, subscription, log.ledger));
    }
    return new MessageId(log.ledger, log.messages.length - 1);
  }

  private pendingFor(stored: StoredMessage, subscription: Subscription, ledger: number): Pending {
    const entry = Number(/,(\d+),/.exec(stored.messageId)?.[1] ?? 0);
    const delay = subscription.holdsDelayed ? stored.delayMs - (Date.now() - stored.publishedAt) : 0;
    return {
      stored,
      id: new MessageId(ledger, entry),
      redeliveryCount: 0,
      dueAt: this.clock.now() + Math.max(0, delay),
    };
  }

  private assertUp(what: string): void {
    if (this.down) throw new Error(`Failed to ${what}: ConnectError (the in-memory broker is unavailable)`);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the InMemoryPulsar client was closed');
  }
}
