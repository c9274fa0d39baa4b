/**
 * Which Pulsar producer settings a producer gets: those for every topic, with its own topic's merged over them
 * (docs/pulsar-features.md#client-options).
 */
import { option, type RaiseOptionError, raiseLibraryError } from '../../options/option-table.js';
import {
  checkClientOptions,
  checkProducerSettings,
  type ProducerOptionsSettings,
  type PulsarClientName,
  type PulsarProducerOptions,
} from '../../pulsar/client-options.js';
import { isRawNativeClient, NativeClientAdapter } from '../../pulsar/native/adapter.js';
import { PulsarWebSocketClient } from '../../pulsar/websocket/index.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { LazyPulsarClient } from '../../pulsar/lazy-client.js';
import type { PulsarProducer } from '../../pulsar/client-types.js';

/** Where retry and dead-letter producers come from when someone else owns them (the module does). */
export interface ProducerSource {
  /** A ready producer on `topic`; the source creates, caches and closes it, never the server. */
  producerFor(topic: string): Promise<PulsarProducer>;
}

const fullName = (topic: string): string => fullTopicName(topic.trim());

/** Which of the two clients `client` is, when it is one of them (a client of the user's may be neither). */
export function clientNameOf(client: unknown): PulsarClientName | undefined {
  if (client instanceof LazyPulsarClient) return client.kind;
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
  raise: RaiseOptionError = raiseLibraryError,
): ProducerOptionsSettings {
  const name = client === 'native' || client === 'websocket' ? client : clientNameOf(client);
  const checked = checkProducerSettings(settings, where, name, raise);
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

/** The producer settings of a surface that creates producers (module, server, client), declared once. */
export const producerOptionEntries = {
  /**
   * Pulsar producer settings of every producer created here (publish, retry copies, dead-letter records), e.g.
   * `compressionType`, `batchingEnabled`, `chunkingEnabled` (docs/pulsar-features.md#client-options).
   * @defaultValue none
   */
  producerOptions: option<PulsarProducerOptions>((value, name, raise) =>
    value === undefined
      ? undefined
      : checkClientOptions<PulsarProducerOptions>('producer', value, name, undefined, raise),
  ),
  /**
   * Pulsar producer settings per topic (short or full name), merged over `producerOptions`.
   * @defaultValue none
   */
  producerOptionsByTopic: option<Record<string, PulsarProducerOptions>>((value, name, raise) =>
    value === undefined
      ? undefined
      : checkProducerSettings(
          { producerOptionsByTopic: value as Record<string, PulsarProducerOptions> },
          name.slice(0, -'producerOptionsByTopic'.length),
          undefined,
          raise,
        ).producerOptionsByTopic,
  ),
};
