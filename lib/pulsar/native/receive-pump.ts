import type { PushResult } from '../client-types.js';

/** What the pump needs of a raw native consumer. */
export interface ReceivingConsumer<Message> {
  /** Without a time-out the addon answers from its receiver queue at once, or when the next message arrives. */
  receive(): Promise<Message>;
}

export interface ReceivePump {
  /** Asks for no more messages; a receive under way ends when the consumer closes. */
  stop(): void;
}

const MAX_BACKOFF_MS = 5_000;
const closedReason = /AlreadyClosed|ConsumerClosed|ConsumerNotInitialized/i;

/**
 * Hands each message of a native consumer to `deliver`, asking for it with receive(). The addon's `listener`
 * would push instead, but its listener thread waits for the main thread after every message, which made it
 * several times slower than a receive answered from the receiver queue (docs/performance.md). One receive is
 * under way at a time, so messages keep their order, and a promise from `deliver` holds the next receive until
 * it settles, as the listener's did.
 */
export function startReceivePump<Message>(
  consumer: ReceivingConsumer<Message>,
  deliver: (message: Message) => PushResult,
): ReceivePump {
  let stopped = false;
  let failures = 0;
  const pump = async (): Promise<void> => {
    while (!stopped) {
      let message: Message;
      try {
        message = await consumer.receive();
        failures = 0;
      } catch (error) {
        // Closed (by us, or unsubscribed): nothing more comes. Anything else: the client reconnects on its own.
        if (stopped || closedReason.test(String((error as { message?: unknown } | null)?.message ?? error))) return;
        failures += 1;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** failures, MAX_BACKOFF_MS)));
        continue;
      }
      if (stopped) return; // left unacknowledged: the broker redelivers it once the consumer is closed
      let waitFor: PushResult;
      try {
        waitFor = deliver(message);
      } catch {
        // The taker reports its own failures; a throw here must neither stop the intake nor reach the process.
        continue;
      }
      if (waitFor) await waitFor.catch(() => undefined);
    }
  };
  void pump().catch(() => undefined);
  return {
    stop() {
      stopped = true;
    },
  };
}
