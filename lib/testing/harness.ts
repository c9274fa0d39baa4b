/**
 * Publishes test messages and waits for how the app settled them: handled, retried (with each copy), dead-lettered
 * (with the record) or dropped. It works on any client (the InMemoryPulsar or a real broker's), because it only
 * uses what an application could see: the topics, read through an observer subscription of its own, and the
 * server's `settled` events.
 */
import { randomUUID } from 'node:crypto';
import { EnvelopeCodec, bareTopicName } from '../envelope/index.js';
import type { SettledEvent } from '../consumer/index.js';
import { BQ, pulsarProperties } from '../pulsar/binding.js';
import type {
  LibraryClient,
  PulsarClientLike,
  PulsarConsumer,
  PulsarMessage,
  PulsarProducer,
} from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import { toLibraryClient } from '../pulsar/library-client.js';
import { fullTopicName } from '../pulsar/topic-name.js';
import { outcomeLineTapsOf } from '../consumer/outcome-lines.js';

/** What the harness needs of a BabelPulsarServer. */
export interface SettlingServer {
  on(event: 'settled', callback: (event: SettledEvent) => void): unknown;
  describe(): Array<{ topic: string }>;
}

/** A message read from a topic. */
export interface ObservedMessage {
  /** Full topic name. */
  topic: string;
  messageId: string;
  data: Buffer;
  properties: Record<string, string>;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

export type OutcomeKind = 'handled' | 'acknowledged' | 'dead-lettered' | 'dropped';

/** How a message ended, after all its retries. */
export interface MessageOutcome {
  /** The message's `bq-message-id` (its envelope's meta.id). */
  id: string;
  /**
   * `handled`: a handler succeeded (acknowledged); `acknowledged`: acknowledged without reaching a handler (an
   * unsupported schema version); `dead-lettered`: see `deadLetter`; `dropped`: given up without a dead-letter topic.
   */
  kind: OutcomeKind;
  /** Why it was dead-lettered or dropped: `failed`, `unknown_urn` or `poison`. */
  reason?: string;
  /** Every delivery's settlement, in order (one per attempt). */
  deliveries: SettledEvent[];
  /** The retry copies re-published to the topic, in order. */
  retries: ObservedMessage[];
  /** The dead-letter record, when `kind` is `dead-lettered`. */
  deadLetter?: ObservedMessage;
  /**
   * The server's log lines about this message (each failed delivery, its dead letter), which the harness keeps
   * out of the test's output unless `logOutcomes` is set.
   */
  log: string[];
}

export interface TestHarnessOptions {
  /**
   * Topics to read, created before anything is published. Default: the server's topics and their `<topic>.dlq`
   * (call after `app.listen()`). Add the topics the app publishes to, to read them with `published(topic)`.
   */
  watch?: string[];
  /** How long `outcome()` waits by default. Default 10000 ms. */
  timeoutMs?: number;
  /**
   * `true`: the server logs the failure and dead-letter lines of the messages the harness published, as it does in
   * the app. By default they are kept in each outcome's `log` (and in a time-out's error) instead, so that a passing
   * test of a message that fails on purpose prints no error line.
   * @defaultValue `false`
   */
  logOutcomes?: boolean;
}

export interface PublishTestOptions {
  /** Default: the server's first topic. */
  topic?: string;
  /** The envelope's meta.id; default a new UUID. */
  id?: string;
  traceId?: string;
  /** Extra Pulsar properties (the `bq-*` ones are set from the envelope and win). */
  properties?: Record<string, string>;
  /** Delivery delay in ms. */
  delay?: number;
}

/** A message the harness published: await `outcome()` for how it settled. */
export interface PublishedTestMessage {
  id: string;
  outcome(timeoutMs?: number): Promise<MessageOutcome>;
}

const TERMINAL = new Set<SettledEvent['action']>(['ack', 'dead-letter', 'drop']);

const parse = (data: Buffer): unknown => {
  try {
    return JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
};

const fullName = fullTopicName;

/** Publishes to and reads from a running app's topics, and tells how each message was settled. */
export class BabelQueueTestHarness {
  private readonly seen: ObservedMessage[] = [];
  private readonly settled: SettledEvent[] = [];
  private readonly observers: PulsarConsumer[] = [];
  private readonly producers = new Map<string, Promise<PulsarProducer>>();
  private readonly listeners = new Set<() => void>();
  private readonly consumedTopics: string[];
  /** The `bq-message-id`s this harness published, with the server's lines about each that it kept. */
  private readonly lines = new Map<string, string[]>();
  private readonly untap: () => void;
  private closed = false;

  private constructor(
    private readonly client: LibraryClient,
    server: SettlingServer,
    private readonly timeoutMs: number,
    logOutcomes: boolean,
  ) {
    this.consumedTopics = [...new Set(server.describe().map(({ topic }) => fullName(topic)))];
    const taps = logOutcomes ? undefined : outcomeLineTapsOf(server);
    this.untap =
      taps?.add(({ text, babelMessageId }) => {
        const kept = this.lines.get(babelMessageId);
        kept?.push(text);
        return kept !== undefined;
      }) ?? (() => undefined);
    server.on('settled', (event) => {
      if (this.closed) return;
      this.settled.push(event);
      this.notify();
    });
  }

  /** Starts reading the topics; call it after `app.listen()` and before publishing. */
  static async attach(
    server: SettlingServer,
    client: PulsarClientLike,
    options: TestHarnessOptions = {},
  ): Promise<BabelQueueTestHarness> {
    const harness = new BabelQueueTestHarness(
      toLibraryClient(client),
      server,
      options.timeoutMs ?? 10_000,
      options.logOutcomes ?? false,
    );
    const watch = options.watch ?? harness.consumedTopics.flatMap((topic) => [topic, `${topic}.dlq`]);
    for (const topic of new Set(watch.map(fullName))) await harness.observe(topic);
    return harness;
  }

  /** Publishes an envelope of `urn` with `data`, as any BabelQueue producer would. */
  async publish(
    urn: string,
    data: Record<string, unknown>,
    options: PublishTestOptions = {},
  ): Promise<PublishedTestMessage> {
    const topic = options.topic ?? this.consumedTopics[0];
    if (topic === undefined) throw new Error('publish needs a topic: the server consumes none yet (call after listen)');
    const envelope = EnvelopeCodec.make(urn, data, {
      queue: bareTopicName(topic),
      ...(options.id !== undefined && { id: options.id }),
      ...(options.traceId !== undefined && { traceId: options.traceId }),
    });
    const properties = { ...options.properties, ...pulsarProperties(envelope) };
    return this.publishRaw(EnvelopeCodec.encodeToBuffer(envelope), properties, {
      topic,
      ...(options.delay !== undefined && { delay: options.delay }),
    });
  }

  /**
   * Publishes bytes and properties as they are (a body that is not an envelope, a foreign schema version).
   * The message is followed by its `bq-message-id` property, set to a new UUID when absent.
   */
  async publishRaw(
    data: Buffer | string,
    properties: Record<string, string> = {},
    options: { topic?: string; delay?: number } = {},
  ): Promise<PublishedTestMessage> {
    const topic = fullName(options.topic ?? this.consumedTopics[0] ?? '');
    const id = properties[BQ.messageId] || randomUUID();
    const before = this.copiesOf(id).length;
    if (!this.lines.has(id)) this.lines.set(id, []);
    const producer = await this.producerFor(topic);
    await producer.send({
      data: Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'),
      properties: { ...properties, [BQ.messageId]: id },
      ...(options.delay !== undefined && options.delay > 0 && { deliverAt: Date.now() + options.delay }),
    });
    return { id, outcome: (timeoutMs) => this.outcomeOf(id, before, timeoutMs) };
  }

  /** How the message of this `bq-message-id` ended (for a message the app published itself). */
  outcome(id: string, timeoutMs?: number): Promise<MessageOutcome> {
    return this.outcomeOf(id, 0, timeoutMs);
  }

  /** Messages read so far from a watched topic. */
  published(topic: string): ObservedMessage[] {
    const name = fullName(topic);
    return this.seen.filter((message) => message.topic === name);
  }

  /** Waits until `count` messages were read from a watched topic, then returns them. */
  async waitForPublished(topic: string, count = 1, timeoutMs = this.timeoutMs): Promise<ObservedMessage[]> {
    return this.waitUntil(`${count} message(s) on ${topic}`, timeoutMs, () => {
      const found = this.published(topic);
      return found.length >= count ? found : undefined;
    });
  }

  /** Stops reading and removes the observer subscriptions (the app is not touched). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.untap();
    this.notify();
    await Promise.allSettled(this.observers.map((observer) => observer.unsubscribe()));
    await Promise.allSettled(this.observers.map((observer) => observer.close()));
    const producers = await Promise.allSettled([...this.producers.values()]);
    await Promise.allSettled(
      producers.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : [])),
    );
  }

  /** Each message of `topic` is noted as the client's intake hands it over (no receive waits with a time-out). */
  private async observe(topic: string): Promise<void> {
    const subscribed: Promise<PulsarConsumer> = this.client.subscribePush(
      {
        topic,
        subscription: `babelqueue-test-observer-${randomUUID().slice(0, 8)}`,
        subscriptionType: 'Exclusive',
      },
      (message) => this.note(topic, subscribed, message),
    );
    this.observers.push(await subscribed);
  }

  private note(topic: string, subscribed: Promise<PulsarConsumer>, message: PulsarMessage): undefined {
    if (this.closed) return undefined;
    void subscribed.then((observer) => observer.acknowledge(message)).catch(() => undefined);
    const data = message.getData();
    this.seen.push({
      topic,
      messageId: messageIdText(message.getMessageId()),
      data,
      properties: message.getProperties(),
      body: parse(data),
    });
    this.notify();
    return undefined;
  }

  private producerFor(topic: string): Promise<PulsarProducer> {
    let producer = this.producers.get(topic);
    if (!producer) {
      producer = this.client.createProducer({ topic });
      this.producers.set(topic, producer);
    }
    return producer;
  }

  /** The copies of a message on the consumed topics: the original first, then its retry copies. */
  private copiesOf(id: string): ObservedMessage[] {
    return this.seen.filter(
      (message) => this.consumedTopics.includes(message.topic) && message.properties[BQ.messageId] === id,
    );
  }

  private outcomeOf(id: string, skip: number, timeoutMs = this.timeoutMs): Promise<MessageOutcome> {
    return this.waitUntil(
      `the settlement of message ${id}`,
      timeoutMs,
      () => this.settledOutcome(id, skip),
      () => {
        const kept = this.lines.get(id) ?? [];
        return kept.length === 0 ? '' : `; the server's lines about it:\n${kept.join('\n')}`;
      },
    );
  }

  private settledOutcome(id: string, skip: number): MessageOutcome | undefined {
    const copies = this.copiesOf(id).slice(skip);
    if (copies.length === 0) return undefined;
    const ids = new Set(copies.map((copy) => copy.messageId));
    const deliveries = this.settled.filter((event) => ids.has(event.messageId));
    const last = deliveries.at(-1);
    if (!last || !TERMINAL.has(last.action) || last.written === false) return undefined;
    // A retry's copy is settled after it was read: every copy must have had its delivery.
    if (copies.some((copy) => !deliveries.some((event) => event.messageId === copy.messageId))) return undefined;
    const outcome: MessageOutcome = {
      id,
      kind:
        last.action === 'dead-letter'
          ? 'dead-lettered'
          : last.action === 'drop'
            ? 'dropped'
            : last.urn === null
              ? 'acknowledged'
              : 'handled',
      ...(last.reason !== undefined && { reason: last.reason }),
      deliveries,
      retries: copies.slice(1),
      log: [...(this.lines.get(id) ?? [])],
    };
    if (last.action === 'dead-letter') {
      const topic = last.deadLetterTopic === undefined ? undefined : fullName(last.deadLetterTopic);
      const record = this.seen.find(
        (message) => message.topic === topic && message.properties[BQ.messageId] === id && !copies.includes(message),
      );
      if (!record) return undefined;
      outcome.deadLetter = record;
    }
    return outcome;
  }

  private waitUntil<T>(
    what: string,
    timeoutMs: number,
    check: () => T | undefined,
    explain: () => string = () => '',
  ): Promise<T> {
    const first = check();
    if (first !== undefined) return Promise.resolve(first);
    return new Promise<T>((resolve, reject) => {
      const listener = (): void => {
        if (this.closed)
          return finish(() => reject(new Error(`the test harness was closed while waiting for ${what}`)));
        const value = check();
        if (value !== undefined) finish(() => resolve(value));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${explain()}`))),
        timeoutMs,
      );
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        settle();
      };
      this.listeners.add(listener);
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
