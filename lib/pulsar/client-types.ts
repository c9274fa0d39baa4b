/**
 * The small structural surface of a Pulsar client that this library uses.
 *
 * Both the native `pulsar-client` package (production default) and the pure-JS
 * `PulsarWebSocketClient` satisfy it, so every layer above takes either one.
 * Keep it minimal: each member added here must exist on both clients.
 */

import type { PulsarConsumerOptions, PulsarProducerOptions } from './client-options.js';
import type { PushRoom } from './push-room.js';

export type SubscriptionType = 'Exclusive' | 'Shared' | 'KeyShared' | 'Failover';

export interface PulsarMessageId {
  toString(): string;
}

export interface PulsarMessage {
  getData(): Buffer;
  getProperties(): Record<string, string>;
  getRedeliveryCount(): number;
  getMessageId(): PulsarMessageId;
  getTopicName(): string;
  getPublishTimestamp(): number;
  getPartitionKey(): string;
  /**
   * The ordering key (Key_Shared routes on it before the partition key). The native client only: the
   * WebSocket API neither sends nor delivers one.
   */
  getOrderingKey?(): string;
}

export interface PulsarProducerMessage {
  data: Buffer;
  properties?: Record<string, string>;
  /** Absolute delivery time, epoch ms. */
  deliverAt?: number;
  /** Relative delivery delay, ms. */
  deliverAfter?: number;
  partitionKey?: string;
  /** Key_Shared routes on this key instead of the partition key. The native client only (see getOrderingKey). */
  orderingKey?: string;
  /**
   * The producer's sequence id for this message, which a broker with deduplication on uses to drop a message
   * sent again (docs/exactly-once.md). The native client only: the WebSocket API has no field for it.
   */
  sequenceId?: number;
}

export interface PulsarProducer {
  send(message: PulsarProducerMessage): Promise<PulsarMessageId | null>;
  flush(): Promise<null | void>;
  close(): Promise<null | void>;
  getTopic(): string;
  isConnected?(): boolean;
}

export interface PulsarConsumer {
  receive(timeoutMs?: number): Promise<PulsarMessage>;
  acknowledge(message: PulsarMessage): Promise<null | void>;
  negativeAcknowledge(message: PulsarMessage): void;
  close(): Promise<null | void>;
  unsubscribe(): Promise<null | void>;
  isConnected?(): boolean;
}

/** A producer's settings: its topic and the pass-through settings (lib/pulsar/client-options.ts). */
export interface PulsarProducerConfig extends PulsarProducerOptions {
  topic: string;
}

/** A consumer's settings: what the library sets, and the pass-through settings (lib/pulsar/client-options.ts). */
export interface PulsarConsumerConfig extends PulsarConsumerOptions {
  topic: string;
  subscription: string;
  subscriptionType?: SubscriptionType;
  nAckRedeliverTimeoutMs?: number;
  subscriptionInitialPosition?: 'Latest' | 'Earliest';
}

export interface PulsarClientLike {
  createProducer(config: PulsarProducerConfig): Promise<PulsarProducer>;
  subscribe(config: PulsarConsumerConfig): Promise<PulsarConsumer>;
  close(): Promise<null | void>;
}

/** What a pushing client's listener gets back: a promise when it must wait (for a free slot) before the next. */
export type PushResult = Promise<void> | undefined;

/** Marks a class that is a LibraryClient by declaration (one symbol for every copy of the package in a process). */
export const LIBRARY_CLIENT: unique symbol = Symbol.for('babelqueue.libraryClient');

/**
 * The client every part of the library calls (`toLibraryClient` makes one of any client): a PulsarClientLike whose
 * consumers hand their messages over as they come. Each client says how it does that itself (the native adapter's
 * receive pump and batches, the WebSocket consumer's socket, a receive loop without a time-out for any other), so a
 * wrapper (the module's LazyPulsarClient) passes the capability on instead of hiding it.
 */
export interface LibraryClient extends PulsarClientLike {
  readonly [LIBRARY_CLIENT]: true;
  /**
   * Subscribes and hands each message to `listener`; a promise it returns holds the next message until it settles.
   * `room` says how many the listener takes at once, so that a client may take several in one go. The consumer's
   * own receive() is not used afterwards: closing it ends the intake.
   */
  subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => PushResult,
    room?: PushRoom,
  ): Promise<PulsarConsumer>;
}

/** Which Pulsar client a service URL picks: the native addon (pulsar://) or the WebSocket API (http://, ws://). */
export type PulsarClientKind = 'native' | 'websocket';
