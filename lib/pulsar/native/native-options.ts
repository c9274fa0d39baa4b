/** The pass-through settings (lib/pulsar/client-options.ts) as the native client takes them. */
import { BabelQueueError } from '../../envelope/index.js';
import { unsupportedReason, type PulsarOptionsKind } from '../client-options.js';
import type { PulsarProducerConfig } from '../client-types.js';

/** Throws, naming the setting, when the native client's Node binding would ignore it without a word. */
export function refuseUnsupported(kind: PulsarOptionsKind, config: object): void {
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    const reason = unsupportedReason(kind, key, 'native');
    if (reason !== undefined) throw new BabelQueueError(reason);
  }
}

/**
 * The producer config for the native client. libpulsar chunks only when batching is off and would otherwise ignore
 * chunkingEnabled in silence, so chunking turns batching off (an explicit `batchingEnabled: true` is refused).
 */
export function nativeProducerConfig(config: PulsarProducerConfig): PulsarProducerConfig {
  refuseUnsupported('producer', config);
  if (config.chunkingEnabled !== true) return config;
  if (config.batchingEnabled === true) {
    throw new BabelQueueError(
      `chunkingEnabled needs batching off for topic ${JSON.stringify(config.topic)} (the native client does not chunk ` +
        'batched messages); leave batchingEnabled out',
    );
  }
  return { ...config, batchingEnabled: false };
}
