/**
 * The Pulsar consumer settings of one subscription (docs/pulsar-features.md#client-options): the server's, with
 * those of the handlers routed in it merged over them. A subscription is one consumer, so two of its handlers that
 * ask for different values of one setting are refused at start-up, naming both.
 */
import { checkClientOptions, type PulsarClientName, type PulsarConsumerOptions } from '../../pulsar/client-options.js';
import type { Binding } from './handler-routes.js';

export function bindingConsumerOptions(
  binding: Binding,
  serverOptions: PulsarConsumerOptions | undefined,
  client: PulsarClientName | undefined,
): PulsarConsumerOptions {
  const merged: Record<string, unknown> = { ...serverOptions };
  const setBy = new Map<string, string>();
  for (const route of binding.routes.values()) {
    for (const [key, value] of Object.entries(route.consumerOptions ?? {})) {
      const earlier = setBy.get(key);
      if (earlier !== undefined && JSON.stringify(merged[key]) !== JSON.stringify(value)) {
        throw new TypeError(
          `${earlier} and ${route.name} share the consumer of topic ${binding.topic} (subscription ` +
            `${binding.subscription}) but ask for different consumerOptions.${key}: give one of them its own subscription`,
        );
      }
      merged[key] = value;
      setBy.set(key, route.name);
    }
  }
  const where = `consumerOptions of topic ${binding.topic} (subscription ${binding.subscription})`;
  return checkClientOptions('consumer', merged, where, client);
}
