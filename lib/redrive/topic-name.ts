import { parseTopic } from '../pulsar/topic-name.js';
import { DeadLetterUsageError } from './errors.js';
import { errorText } from '../envelope/error-text.js';

/**
 * The fully qualified dead-letter topic, checked by the same rule on both clients (Pulsar's v2 names:
 * `orders.dlq`, `tenant/ns/orders.dlq`, `persistent://tenant/ns/orders.dlq`). The native client would accept
 * e.g. `persistent://public/default/bad//x.dlq` and create that topic; the WebSocket API refuses it.
 */
export function deadLetterTopicName(name: unknown): string {
  try {
    return parseTopic(typeof name === 'string' ? name.trim() : name).full;
  } catch (error) {
    throw new DeadLetterUsageError(errorText(error));
  }
}
