import type { PulsarConsumer, PulsarConsumerConfig, PulsarMessage } from '../pulsar/client-types.js';

const DONE = Promise.resolve();

/**
 * The hand-over between a client that pushes messages (the native client's `listener`) and the TopicConsumer
 * that takes them. The client calls `deliver` and waits for the promise it returns before pushing the next
 * message, so the promise is the flow control: it resolves once the consumer has a free slot. Messages pushed
 * before the consumer starts wait for it; after `close()` they are left unacknowledged, for redelivery.
 */
export class PushFeed {
  private sink: ((message: PulsarMessage) => Promise<void>) | null = null;
  private attached: () => void = () => {};
  private readonly ready = new Promise<void>((resolve) => {
    this.attached = resolve;
  });

  readonly deliver = (message: PulsarMessage): Promise<void> =>
    this.sink ? this.sink(message) : this.ready.then(() => this.sink?.(message));

  attach(sink: (message: PulsarMessage) => Promise<void>): void {
    this.sink = sink;
    this.attached();
  }

  /** Takes no more messages: what is pushed from now on stays unacknowledged and is redelivered. */
  close(): void {
    this.attach(() => DONE);
  }
}

/** A client that can push messages to a listener instead of being asked with receive(). */
export interface PushSubscriber {
  subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => Promise<void>,
  ): Promise<PulsarConsumer>;
}

export const canPush = (client: object): client is PushSubscriber =>
  typeof (client as Partial<PushSubscriber>).subscribePush === 'function';
