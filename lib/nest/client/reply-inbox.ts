import { randomUUID } from 'node:crypto';
import type { ConsumerLogger } from '../../consumer/index.js';
import { errorText } from '../../envelope/error-text.js';
import type { PulsarClientLike, PulsarConsumer, PulsarMessage } from '../../pulsar/client-types.js';
import { toLibraryClient } from '../../pulsar/library-client.js';
import { readReply, type ReplyBody } from '../../pulsar/reply-binding.js';
import { parseTopic } from '../../pulsar/topic-name.js';

/** The subscription every reply topic is read with (one reader per topic: Exclusive). */
export const REPLY_SUBSCRIPTION = 'bq-replies';

/**
 * The reply topic of one client instance: `<namespace>/bq-replies-<uuid>`, so that no two instances (also of one
 * service) ever read each other's replies.
 */
export function replyTopicName(namespace: string): string {
  const { tenant, namespace: ns } = parseTopic(`${namespace}/probe`);
  return `persistent://${tenant}/${ns}/bq-replies-${randomUUID()}`;
}

/** The namespace of a topic (`tenant/namespace`); `public/default` without one. */
export function replyNamespaceOf(topic: string | undefined): string {
  if (topic === undefined) return 'public/default';
  const { tenant, namespace } = parseTopic(topic);
  return `${tenant}/${namespace}`;
}

/** What the inbox counted since it opened. */
export interface ReplyInboxStats {
  /** Calls waiting for their reply. */
  waiting: number;
  /** Replies delivered to their call. */
  delivered: number;
  /** Replies that found no call waiting (it had timed out or been unsubscribed): dropped. */
  late: number;
  /** Messages on the reply topic that are not replies: dropped. */
  unreadable: number;
}

/**
 * Reads the replies of one client instance from its reply topic and hands each to the call waiting for its
 * correlation id. A reply no call waits for (the caller gave up) is acknowledged, counted and dropped: it can never
 * reach another call, since every call has an id of its own.
 */
export class ReplyInbox {
  private consumer: PulsarConsumer | null = null;
  private opening: Promise<void> | null = null;
  private closed = false;
  private readonly waiting = new Map<string, (body: ReplyBody) => void>();
  private readonly counts = { delivered: 0, late: 0, unreadable: 0 };

  constructor(
    readonly topic: string,
    private readonly client: () => Promise<PulsarClientLike>,
    private readonly logger: ConsumerLogger,
  ) {}

  /** Subscribes the reply topic (once; a failed attempt is retried by the next call). */
  open(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the reply inbox is closed'));
    this.opening ??= (async () => {
      const client = toLibraryClient(await this.client());
      // Each reply is taken by the client's intake as it comes: nothing waits on a receive with a time-out. A reply
      // may come before subscribePush() has answered: it is acknowledged once the consumer is there.
      const subscribed: Promise<PulsarConsumer> = client.subscribePush(
        {
          topic: this.topic,
          subscription: REPLY_SUBSCRIPTION,
          subscriptionType: 'Exclusive',
          // A reply written before the subscription existed (it cannot be: requests go out after open) still counts.
          subscriptionInitialPosition: 'Earliest',
        },
        (message) => this.take(subscribed, message),
      );
      this.consumer = await subscribed;
    })().catch((error: unknown) => {
      this.opening = null;
      throw error;
    });
    return this.opening;
  }

  /** Waits for the reply of `correlationId`; returns the function that stops waiting. */
  expect(correlationId: string, onReply: (body: ReplyBody) => void): () => void {
    this.waiting.set(correlationId, onReply);
    return () => {
      if (this.waiting.get(correlationId) === onReply) this.waiting.delete(correlationId);
    };
  }

  get stats(): ReplyInboxStats {
    return { waiting: this.waiting.size, ...this.counts };
  }

  /**
   * Stops reading and removes the subscription, so that the broker deletes the topic once it is inactive (its
   * `brokerDeleteInactiveTopics*` settings); calls still waiting are left to their time-out.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening?.catch(() => undefined);
    const consumer = this.consumer;
    this.consumer = null;
    if (!consumer) return;
    try {
      await consumer.unsubscribe();
    } catch (error) {
      this.logger.warn(`could not remove the reply subscription of ${this.topic}: ${errorText(error)}`);
    }
    await consumer.close().catch(() => undefined);
  }

  private take(subscribed: Promise<PulsarConsumer>, message: PulsarMessage): undefined {
    if (this.closed) return undefined;
    // Read before the acknowledgement: a reply is worth nothing to a later reader (the next instance has a topic
    // of its own), so it is acknowledged whatever it says.
    this.deliver(message.getProperties(), message.getData());
    void subscribed.then((consumer) => consumer.acknowledge(message)).catch(() => undefined);
    return undefined;
  }

  private deliver(properties: Record<string, string>, data: Buffer): void {
    const reply = readReply(properties, data);
    if (reply === null) {
      this.counts.unreadable++;
      this.logger.warn(`a message on reply topic ${this.topic} is not a reply (no bq-correlation-id): dropped`);
      return;
    }
    const onReply = this.waiting.get(reply.correlationId);
    if (!onReply) {
      this.counts.late++;
      this.logger.debug?.(`reply ${reply.correlationId} on ${this.topic} came after its caller gave up: dropped`);
      return;
    }
    this.waiting.delete(reply.correlationId);
    this.counts.delivered++;
    onReply(reply.body);
  }
}
