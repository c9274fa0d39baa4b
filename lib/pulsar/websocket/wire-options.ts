/**
 * The pass-through settings (lib/pulsar/client-options.ts) as the broker's WebSocket API takes them: query
 * parameters of the producer and consumer URLs. A setting the API has no parameter for is refused, never dropped:
 * dropping it would leave the user believing it applies.
 */
import {
  CONSUMER_OPTION_SPECS,
  optionNames,
  PRODUCER_OPTION_SPECS,
  unsupportedReason,
  type PulsarOptionsKind,
} from '../client-options.js';
import { PulsarWebSocketError } from './errors.js';

const invalid = (topic: string, message: string): PulsarWebSocketError =>
  new PulsarWebSocketError(message, { code: 'InvalidArgument', topic });

/**
 * Adds the pass-through settings of `config` to `query`. `ownKeys` are the keys the caller maps itself (topic,
 * subscription, ...). Throws PulsarWebSocketError InvalidArgument for an unknown, invalid or unsupported setting.
 */
export function addPassThroughQuery(
  kind: PulsarOptionsKind,
  topic: string,
  config: object,
  ownKeys: readonly string[],
  query: URLSearchParams,
): void {
  const specs = kind === 'consumer' ? CONSUMER_OPTION_SPECS : PRODUCER_OPTION_SPECS;
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined || ownKeys.includes(key)) continue;
    const spec = (specs as Record<string, (typeof specs)[keyof typeof specs]>)[key];
    if (!spec) {
      throw invalid(
        topic,
        `${key} is not a ${kind} setting of the WebSocket client (topic ${topic}); allowed: ${[...ownKeys, ...optionNames(kind)].join(', ')}`,
      );
    }
    const unsupported = unsupportedReason(kind, key, 'websocket');
    if (unsupported !== undefined || spec.websocket === false) throw invalid(topic, `${unsupported} (topic ${topic})`);
    const problem = spec.check(value);
    if (problem !== undefined) throw invalid(topic, `${key} ${problem}`);
    query.set(spec.websocket, spec.wire ? spec.wire(value) : String(value));
  }
}
