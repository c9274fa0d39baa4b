import type { SubscriptionType } from '../../pulsar/client-types.js';
import { fullTopicName } from '../../pulsar/websocket/topic.js';

/**
 * The start-up line of one subscription (pure): what it consumes and which handler runs each URN, so a handler
 * that is not wired shows at a glance. E.g.
 * `consuming persistent://public/default/orders (subscription babelqueue, Shared): urn:babel:orders:created -> OrdersController.created`
 */
export function subscriptionLine(
  topic: string,
  binding: { subscription: string; routes: ReadonlyMap<string, { name: string }>; retryTopic?: string | null },
  type: SubscriptionType,
): string {
  const routes = [...binding.routes].map(([urn, route]) => `${urn} -> ${route.name}`);
  const retries = binding.retryTopic ? ` and its retry topic ${fullTopicName(binding.retryTopic)}` : '';
  return (
    `consuming ${topic}${retries} (subscription ${binding.subscription}, ${type}): ` +
    (routes.length > 0 ? routes.join(', ') : 'no handlers (every message is an unknown URN)')
  );
}
