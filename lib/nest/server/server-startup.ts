import type { ConsumerLogger } from '../../consumer/index.js';
import { LazyPulsarClient } from '../../pulsar/lazy-client.js';
import { assertSomethingListens, startupFailure } from '../../pulsar/startup-failure.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { waitForBroker, type BrokerWait } from '../client/broker-wait.js';
import type { ResolvedServerOptions } from './server-options.js';
import type { StatusMonitor } from './status-monitor.js';
import type { SubscriptionSet } from './subscription-set.js';

export interface StartupDeps {
  settings: ResolvedServerOptions;
  /** The client as the user gave it (the start-up checks name its URL). */
  client: unknown;
  monitor: StatusMonitor;
  logger: ConsumerLogger;
  /** True once the server is closing: nothing starts consuming then. */
  closing(): boolean;
}

/**
 * Opens every subscription and starts consuming. A broker that does not answer fails the start with one line
 * naming the URL and the likely cause, or with `brokerAtStart: 'optional'` is waited for: the returned wait
 * subscribes (new subscriptions at the earliest message) and starts consuming once it answers.
 */
export async function openAndConsume(subscriptions: SubscriptionSet, deps: StartupDeps): Promise<BrokerWait | null> {
  const { settings, monitor } = deps;
  const openAll = async (initialPosition?: 'Earliest' | 'Latest') => {
    try {
      await subscriptions.open(settings.shutdownTimeoutMs, initialPosition);
    } catch (error) {
      monitor.set('disconnected');
      throw error;
    }
  };
  const consume = () => {
    if (deps.closing()) return;
    subscriptions.startConsuming();
    monitor.start();
  };
  // The module's client is created here, on first need. Creating it connects nothing; it fails only when the
  // client cannot be made (pulsar-client not installed), which no wait for the broker would cure.
  if (deps.client instanceof LazyPulsarClient) {
    try {
      await deps.client.open();
    } catch (error) {
      throw startupFailure(error, deps.client);
    }
  }
  try {
    await assertSomethingListens(deps.client);
    await openAll();
  } catch (error) {
    if (settings.brokerAtStart === 'required') throw startupFailure(error, deps.client);
    const topics = settings.topics.map(fullTopicName).join(', ');
    return waitForBroker(topics, deps.logger, error, async () => {
      // Subscriptions made only after waiting for the broker start at the earliest message the topic still stores:
      // the app's publisher (connected on its own) may have published before they existed, and `Latest` would never
      // see it. An existing subscription keeps its position (Pulsar applies it only on creation); the user's wins.
      await openAll(settings.subscriptionInitialPosition ?? 'Earliest');
      consume();
    });
  }
  consume();
  return null;
}
