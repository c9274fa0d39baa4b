import { isSubscriptionBusy } from '../pulsar/client-errors.js';
import { errorMessage } from '../envelope/index.js';
import type { PulsarClientLike, PulsarConsumer } from '../pulsar/client-types.js';

/** The subscription the operator tools read a dead-letter topic through (docs/dead-letters.md). */
export const DEFAULT_REDRIVE_SUBSCRIPTION = 'babelqueue-redrive';

/**
 * Opens the DLQ's subscription: Exclusive, so two tools at once cannot each see half the records (the second
 * fails to subscribe), and from the earliest record, so a new subscription sees what the topic still retains.
 */
export function subscribeToDeadLetters(
  client: PulsarClientLike,
  options: { topic: string; subscription?: string | undefined },
): Promise<PulsarConsumer> {
  return client.subscribe({
    topic: options.topic,
    subscription: options.subscription ?? DEFAULT_REDRIVE_SUBSCRIPTION,
    subscriptionType: 'Exclusive',
    subscriptionInitialPosition: 'Earliest',
  });
}

/**
 * Makes sure the DLQ's `babelqueue-redrive` subscription exists before the first record is written: Pulsar keeps
 * a message only while some subscription has not acknowledged it (or a retention policy holds it), so without
 * this the records written before any operator tool ran could be deleted. Subscribing and closing leaves the
 * durable subscription behind. Never throws: a role without consume permission on the DLQ gets `warn` instead.
 */
export async function keepDeadLetters(
  client: PulsarClientLike,
  topic: string,
  warn: (message: string) => void,
): Promise<void> {
  try {
    const consumer = await subscribeToDeadLetters(client, { topic });
    await consumer.close();
  } catch (error) {
    // A redrive or the dashboard holds the Exclusive subscription right now: it exists, which is all we need.
    if (isSubscriptionBusy(error)) return;
    warn(
      `could not create the subscription ${DEFAULT_REDRIVE_SUBSCRIPTION} on ${topic} (${errorMessage(error) ?? ''}): ` +
        'records written there before an operator tool subscribes may be deleted unless the topic has retention',
    );
  }
}
