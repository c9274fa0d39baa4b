import type { ConsumerLogger } from '../../consumer/index.js';
import { assertSomethingListens, startupFailure } from '../../pulsar/startup-failure.js';
import { fullTopicName } from '../../pulsar/websocket/topic.js';
import { waitForBroker, type BrokerWait } from './broker-wait.js';
import { positionAfterBrokerWait } from './late-subscription.js';
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
  try {
    await assertSomethingListens(deps.client);
    await openAll();
  } catch (error) {
    if (settings.brokerAtStart === 'required') throw startupFailure(error, deps.client);
    const topics = settings.topics.map(fullTopicName).join(', ');
    return waitForBroker(topics, deps.logger, error, async () => {
      await openAll(positionAfterBrokerWait(settings.subscriptionInitialPosition));
      consume();
    });
  }
  consume();
  return null;
}
