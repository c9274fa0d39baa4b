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
import { normalizeTopic } from '../pulsar/topic-name.js';
import type {
  PulsarClientLike,
  PulsarConsumer,
  PulsarConsumerConfig,
  PulsarProducer,
  PulsarProducerConfig,
  PulsarProducerMessage,
} from '../pulsar/client-types.js';
import { MessageId, type Pending, type StoredMessage } from './in-memory-message.js';
import { InMemoryProducer } from './in-memory-producer.js';
import { InMemoryConsumer, Subscription } from './in-memory-subscription.js';
import { InMemoryOutbox } from './in-memory-outbox.js';
import { InMemorySchedules } from './in-memory-schedules.js';
import { TestClock } from './test-clock.js';

export type { StoredMessage } from './in-memory-message.js';
export { TestClock } from './test-clock.js';

/** The Pulsar default: a negatively acknowledged message comes back after a minute. */
const DEFAULT_NACK_REDELIVER_MS = 60_000;

function topicName(topic: string): string {
  return normalizeTopic(topic);
}

/**
 * An in-memory Pulsar client and broker in one. Give it to the module (`BabelQueueModule.forRoot({ client })`,
 * or `useInMemoryPulsar(testingModuleBuilder, pulsar)` to replace the client of an existing AppModule).
 */
export class InMemoryPulsar implements PulsarClientLike {
  readonly clock = new TestClock();
  /** The schedules the module's client stores under useInMemoryPulsar; advance(ms) fires those due. */
  readonly schedules = new InMemorySchedules(
    this.clock,
    (topic, message) => this.store(topicName(topic), message),
    (schedules, options) => new InMemoryOutbox(schedules, this.clock, options),
  );
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

  /**
   * Moves the clock forward: delayed messages and negatively acknowledged ones due by then are delivered, and the
   * schedules due by then fire (every tick passed, one message each).
   */
  advance(ms: number): void {
    this.clock.advance(ms);
    this.schedules.fireDue();
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
