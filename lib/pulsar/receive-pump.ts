import type { PushResult } from './client-types.js';
import type { PushRoom } from './push-room.js';

/** What the pump needs of a consumer: a receive without a time-out, ended by closing the consumer. */
export interface ReceivingConsumer<Message> {
  /**
   * Answers with the next message, or rejects once the consumer is closed. Never given a time-out: the native addon
   * runs a receive with a time-out as a libuv work item, holding one of the process's pool threads while it waits;
   * without one it answers from its receiver queue at once, or when the next message arrives.
   */
  receive(): Promise<Message>;
}

/** A consumer subscribed with a batch receive policy (the native client's). */
export interface BatchReceivingConsumer<Message> extends ReceivingConsumer<Message> {
  /** Answers once `batch.size` messages are queued, or with what came when the batch's timer ends. */
  batchReceive(): Promise<Message[]>;
}

/** Taking several messages at once, when the consumer was subscribed with a batch receive policy. */
export interface PumpBatch {
  /** The policy's `maxNumMessages`: a batch of fewer came back on its timer. */
  size: number;
  /** What the taker can take at once. */
  taker: PushRoom;
}

export interface ReceivePump {
  /** Asks for no more messages; a receive under way ends when the consumer closes. */
  stop(): void;
}

const MAX_BACKOFF_MS = 5_000;
/** After a batch that came back short, this many single receives (doubling, up to the cap) before the next try. */
const MAX_SINGLES_BETWEEN_TRIES = 256;
const closedReason = /AlreadyClosed|ConsumerClosed|ConsumerNotInitialized/i;

/**
 * Hands each message of a consumer to `deliver`, for as long as the consumer is open: the one intake of every
 * client (the native adapter's, the WebSocket client's, and any other client's). For the native client, the addon's
 * `listener` would push instead, but its listener thread waits for the main thread after every message, which made
 * it several times slower than a receive answered from the receiver queue (docs/performance.md). One receive is under way at a time, so messages
 * keep their order, and a promise from `deliver` holds the next receive until it settles, as the listener's did.
 *
 * With `batch`, a backlog is taken `batch.size` at a time (one promise from the addon instead of one per message),
 * and only once the taker has room for the whole batch (the pump waits for it while the taker is busy with what it
 * holds), so no more is held than one at a time would hold. A batch that comes back short (the queue had fewer: its
 * timer ended) means there is no backlog: the pump goes back to single receives, which answer the moment a message
 * comes, and tries a batch again later. A taker with no room at all (paused) gets one message at a time.
 */
export function startReceivePump<Message>(
  consumer: BatchReceivingConsumer<Message>,
  deliver: (message: Message) => PushResult,
  batch?: PumpBatch,
): ReceivePump;
export function startReceivePump<Message>(
  consumer: ReceivingConsumer<Message>,
  deliver: (message: Message) => PushResult,
): ReceivePump;
export function startReceivePump<Message>(
  consumer: ReceivingConsumer<Message> & Partial<BatchReceivingConsumer<Message>>,
  deliver: (message: Message) => PushResult,
  batch?: PumpBatch,
): ReceivePump {
  let stopped = false;
  let failures = 0;
  let singlesBetweenTries = 0;
  let singlesBeforeTry = 0;

  const take = async (): Promise<Message[] | Message> => {
    let room = batch && singlesBeforeTry === 0 ? batch.taker.room() : 0;
    if (batch && room > 0 && room < batch.size) {
      await batch.taker.roomFor(batch.size);
      room = batch.taker.room();
    }
    if (!batch || !consumer.batchReceive || room < batch.size) {
      singlesBeforeTry = Math.max(0, singlesBeforeTry - 1);
      return consumer.receive();
    }
    const messages = await consumer.batchReceive();
    if (messages.length < batch.size) {
      singlesBetweenTries = Math.min(Math.max(1, 2 * singlesBetweenTries), MAX_SINGLES_BETWEEN_TRIES);
      singlesBeforeTry = singlesBetweenTries;
    } else {
      singlesBetweenTries = 0;
    }
    return messages;
  };

  /** The taker's promise, when it holds the next receive. */
  const handOver = (message: Message): PushResult => {
    try {
      return deliver(message);
    } catch {
      // The taker reports its own failures; a throw here must neither stop the intake nor reach the process.
      return undefined;
    }
  };

  const pump = async (): Promise<void> => {
    while (!stopped) {
      let taken: Message[] | Message;
      try {
        taken = await take();
        failures = 0;
      } catch (error) {
        // Closed (by us, or unsubscribed): nothing more comes. Anything else: the client reconnects on its own.
        if (stopped || closedReason.test(String((error as { message?: unknown } | null)?.message ?? error))) return;
        failures += 1;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** failures, MAX_BACKOFF_MS)));
        continue;
      }
      for (const message of Array.isArray(taken) ? taken : [taken]) {
        if (stopped) return; // left unacknowledged: the broker redelivers it once the consumer is closed
        const waitFor = handOver(message);
        if (waitFor) await waitFor.catch(() => undefined);
      }
    }
  };
  void pump().catch(() => undefined);
  return {
    stop() {
      stopped = true;
    },
  };
}
