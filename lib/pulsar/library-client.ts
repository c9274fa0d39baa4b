/**
 * `toLibraryClient`: the one place where a client enters the library. Whatever the user hands over (the native
 * `Client`, a PulsarWebSocketClient, the module's LazyPulsarClient, the testing kit's in-memory client, a client of
 * their own) comes out as a LibraryClient, each with its own intake.
 */
import {
  LIBRARY_CLIENT,
  type LibraryClient,
  type PulsarClientLike,
  type PulsarConsumer,
  type PulsarConsumerConfig,
  type PulsarMessage,
  type PulsarProducer,
  type PulsarProducerConfig,
  type PushResult,
} from './client-types.js';
import { isRawNativeClient, NativeClientAdapter } from './native/adapter.js';
import type { PushRoom } from './push-room.js';
import { startReceivePump, type ReceivePump } from './receive-pump.js';

/** A client that declares itself a LibraryClient (its class carries the LIBRARY_CLIENT mark). */
export const isLibraryClient = (client: PulsarClientLike): client is LibraryClient =>
  (client as Partial<LibraryClient>)[LIBRARY_CLIENT] === true;

/** The client the library calls: a LibraryClient as it is, the native adapter for a raw native client, else a receive loop. */
export function toLibraryClient(client: PulsarClientLike): LibraryClient {
  if (isLibraryClient(client)) return client;
  if (isRawNativeClient(client)) return new NativeClientAdapter(client);
  return new ReceivingClient(client);
}

/**
 * Any other client (the testing kit's in-memory broker, a client of the user's own): its consumers' messages are
 * taken with receive() without a time-out, one at a time, and the intake ends when the consumer closes.
 */
export class ReceivingClient implements LibraryClient {
  readonly [LIBRARY_CLIENT] = true as const;

  constructor(readonly client: PulsarClientLike) {}

  createProducer(config: PulsarProducerConfig): Promise<PulsarProducer> {
    return this.client.createProducer(config);
  }

  subscribe(config: PulsarConsumerConfig): Promise<PulsarConsumer> {
    return this.client.subscribe(config);
  }

  async subscribePush(
    config: PulsarConsumerConfig,
    listener: (message: PulsarMessage) => PushResult,
    _room?: PushRoom,
  ): Promise<PulsarConsumer> {
    return pumped(await this.client.subscribe(config), listener);
  }

  close(): Promise<null | void> {
    return this.client.close();
  }
}

/**
 * The consumer with a receive pump started on it: closing or unsubscribing it stops the pump first, so that nothing
 * is handed over once it is closed.
 */
export function pumped(consumer: PulsarConsumer, listener: (message: PulsarMessage) => PushResult): PulsarConsumer {
  const pump: ReceivePump = startReceivePump<PulsarMessage>({ receive: () => consumer.receive() }, listener);
  return {
    receive: (timeoutMs) => consumer.receive(timeoutMs),
    acknowledge: (message) => consumer.acknowledge(message),
    negativeAcknowledge: (message) => consumer.negativeAcknowledge(message),
    close: () => {
      pump.stop();
      return consumer.close();
    },
    unsubscribe: () => {
      pump.stop();
      return consumer.unsubscribe();
    },
    isConnected: () => consumer.isConnected?.() ?? true,
  };
}
