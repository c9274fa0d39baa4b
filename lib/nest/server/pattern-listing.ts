import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { topicListerOf, type TopicLister } from '../../pulsar/topic-lister.js';
import { fullTopicName } from '../../pulsar/websocket/topic.js';
import { isProducer, type ResolvedServerOptions } from './server-options.js';
import type { Subscription } from './subscription.js';

/**
 * How a pattern subscription lists its namespace: through the broker's admin API (neither client can list
 * topics), known only for a client the library created; otherwise an error naming the handlers.
 */
export function patternListerFor(client: PulsarClientLike, model: Subscription): TopicLister {
  const list = topicListerOf(client);
  if (list) return list;
  const { pattern } = model.pattern!;
  const names = [...model.routes.values()].map(({ name }) => name).join(', ');
  throw new TypeError(
    `${names}: topicsPattern ${pattern.label} needs the broker's admin API to list the topics of ` +
      `${pattern.tenant}/${pattern.namespace}, and this client was not created by the library: give ` +
      'BabelQueueModule a serviceUrl, or create the client with createPulsarClient or new PulsarWebSocketClient',
  );
}

/** The one dead-letter topic of every record, when one is configured: no pattern consumes it. */
export function singleDeadLetterTopic(deadLetter: ResolvedServerOptions['deadLetter']): string | undefined {
  if (deadLetter === true || deadLetter === false || deadLetter === undefined) return undefined;
  return fullTopicName(isProducer(deadLetter) ? deadLetter.getTopic() : deadLetter.trim());
}
