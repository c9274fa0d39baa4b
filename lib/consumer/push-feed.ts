import type { PulsarConsumer, PulsarConsumerConfig, PulsarMessage, PushResult } from '../pulsar/client-types.js';

export type { PushResult };

/**
 * The hand-over between a client that pushes messages (the native adapter's receive pump) and the TopicConsumer
 * that takes them. Messages pushed before the consumer starts wait for it; after `close()` they are left
 * unacknowledged, for redelivery.
 */
export class PushFeed {
  private sink: ((message: PulsarMessage) => PushResult) | null = null;
  private attached: () => void = () => {};
  private readonly ready = new Promise<void>((resolve) => {
    this.attached = resolve;
  });

  readonly deliver = (message: PulsarMessage): PushResult =>
    this.sink ? this.sink(message) : this.ready.then(() => this.sink?.(message));

  attach(sink: (message: PulsarMessage) => PushResult): void {
    this.sink = sink;
    this.attached();
  }

  /** Takes no more messages: what is pushed from now on stays unacknowledged and is redelivered. */
  close(): void {
    this.attach(() => undefined);
  }
}

/** A client that pushes messages to a listener, holding the next one while the listener's promise runs. */
export interface PushSubscriber {
  subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => PushResult,
  ): Promise<PulsarConsumer>;
}

export const canPush = (client: object): client is PushSubscriber =>
  typeof (client as Partial<PushSubscriber>).subscribePush === 'function';
