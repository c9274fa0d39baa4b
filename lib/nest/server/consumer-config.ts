import type { PulsarConsumerOptions } from '../../pulsar/client-options.js';
import type { PulsarConsumerConfig } from '../../pulsar/client-types.js';
import type { Binding } from './handler-routes.js';
import type { ResolvedServerOptions } from './server-options.js';

type ConsumerSettings = Pick<
  ResolvedServerOptions,
  'subscriptionType' | 'subscriptionInitialPosition' | 'receiverQueueSize' | 'nackRedeliverTimeoutMs'
>;

/** The Pulsar consumer of one binding (a topic and subscription), from the server's settings (pure). */
export function consumerConfigFor(
  binding: Pick<Binding, 'topic' | 'subscription'>,
  settings: ConsumerSettings,
  /** The binding's Pulsar consumer settings (the server's, with its handlers' merged over them). */
  passThrough: PulsarConsumerOptions = {},
  /** Where a subscription starts that the server opens on a topic found later (a pattern's new topic). */
  initialPosition?: 'Latest' | 'Earliest',
): PulsarConsumerConfig {
  const { receiverQueueSize, nackRedeliverTimeoutMs } = settings;
  const subscriptionInitialPosition = initialPosition ?? settings.subscriptionInitialPosition;
  return {
    topic: binding.topic,
    subscription: binding.subscription,
    subscriptionType: settings.subscriptionType,
    ...(subscriptionInitialPosition !== undefined && { subscriptionInitialPosition }),
    ...(receiverQueueSize !== undefined && { receiverQueueSize }),
    ...(nackRedeliverTimeoutMs !== undefined && { nAckRedeliverTimeoutMs: nackRedeliverTimeoutMs }),
    ...passThrough,
  };
}

/** Where a binding's dead letters go: `<topic>.dlq`, the configured topic, or null (none, or a producer of the user's). */
export function deadLetterTopicOf(topic: string, deadLetter: ResolvedServerOptions['deadLetter']): string | null {
  if (deadLetter === true) return `${topic}.dlq`;
  return typeof deadLetter === 'string' ? deadLetter : null;
}

/**
 * Where a subscription's retry copies go with `retry: 'retry-topic'`: `<topic>.<subscription>.retry`, a topic of
 * that subscription alone (the same subscription consumes it beside the topic); null with any other retry mode.
 */
export function retryTopicOf(
  topic: string,
  subscription: string,
  retry: ResolvedServerOptions['retry'],
): string | null {
  return retry === 'retry-topic' ? `${topic}.${subscription}.retry` : null;
}
