/**
 * Which Pulsar producer settings a producer gets: those for every topic, with its own topic's merged over them
 * (docs/pulsar-features.md#client-options).
 */
import { BabelQueueError } from '../envelope/index.js';
import {
  checkProducerSettings,
  type ProducerOptionsSettings,
  type PulsarClientName,
  type PulsarProducerOptions,
} from '../pulsar/client-options.js';
import { isRawNativeClient, NativeClientAdapter } from '../pulsar/native/adapter.js';
import { normalizeTopic, PulsarWebSocketClient } from '../pulsar/websocket/index.js';

const fullName = (topic: string): string => {
  try {
    return normalizeTopic(topic.trim());
  } catch {
    return topic.trim();
  }
};

/** Which of the two clients `client` is, when it is one of them (a client of the user's may be neither). */
export function clientNameOf(client: unknown): PulsarClientName | undefined {
  if (client instanceof PulsarWebSocketClient) return 'websocket';
  if (client instanceof NativeClientAdapter || isRawNativeClient(client)) return 'native';
  return undefined;
}

/**
 * Checks the settings against the client (or the client kind a service URL selects); the per-topic keys come back
 * as full topic names.
 */
export function checkedProducerSettings(
  client: unknown,
  settings: ProducerOptionsSettings,
  where = 'options.',
): ProducerOptionsSettings {
  let checked: ProducerOptionsSettings;
  try {
    const name = client === 'native' || client === 'websocket' ? client : clientNameOf(client);
    checked = checkProducerSettings(settings, where, name);
  } catch (error) {
    throw new BabelQueueError((error as Error).message, { cause: error });
  }
  if (!checked.producerOptionsByTopic) return checked;
  const byTopic: Record<string, PulsarProducerOptions> = {};
  for (const [topic, options] of Object.entries(checked.producerOptionsByTopic)) byTopic[fullName(topic)] = options;
  return { ...checked, producerOptionsByTopic: byTopic };
}

/** The settings of a producer on `topic` (any form of its name). */
export function producerOptionsFor(settings: ProducerOptionsSettings, topic: string): PulsarProducerOptions {
  const own = settings.producerOptionsByTopic?.[fullName(topic)];
  return { ...settings.producerOptions, ...own };
}
