// What BabelPulsarClient keeps of its options, all checked when it is constructed, so that a mistake (both client
// and serviceUrl, producer settings the client cannot honour) fails at `new` rather than on the first publish.
// Kept apart so that the constructor only takes the result.
import { BabelQueueError } from '../../envelope/index.js';
import { resolveOptions, type OptionsInput } from '../../options/option-table.js';
import { clientKindFor } from '../../pulsar/client-factory.js';
import type { ProducerOptionsSettings } from '../../pulsar/client-options.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';
import { clientOptionTable, raiseClientError } from './client-options.js';
import { checkedProducerSettings } from './producer-settings.js';
import { replyNamespaceOf } from './reply-inbox.js';

/** The client kind a service URL selects; undefined for a URL that connect() will refuse with its own error. */
function kindOf(serviceUrl: string | undefined): string | undefined {
  try {
    return clientKindFor(serviceUrl);
  } catch {
    return undefined;
  }
}

/** The options of a BabelPulsarClient, checked, as the client keeps them. */
export interface ClientSettings {
  /** The ready Pulsar client it was given; undefined when it creates one from `serviceUrl`. */
  readonly client: PulsarClientLike | undefined;
  /** The default topic of publish() and emit(), if any. */
  readonly topic: string | undefined;
  readonly tracing: boolean;
  readonly publishTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Where the reply topic of send() is created: the given one, else the default topic's namespace. */
  readonly replyNamespace: string;
  /** The settings of the producers the client creates itself. */
  readonly producerSettings: ProducerOptionsSettings;
}

/** Checks the options of `new BabelPulsarClient(options)`; throws a BabelQueueError on the first mistake. */
export function checkedClientSettings(options: OptionsInput<typeof clientOptionTable>): ClientSettings {
  if (!options || typeof options !== 'object')
    throw new BabelQueueError('BabelPulsarClient needs options: { client, topic } or { serviceUrl, topic }');
  const {
    client,
    serviceUrl,
    topic,
    telemetry,
    publishTimeoutMs,
    requestTimeoutMs,
    replyNamespace,
    producers,
    producerOptions,
    producerOptionsByTopic,
  } = resolveOptions(clientOptionTable, options as Record<string, unknown>, 'options', raiseClientError);
  if (client !== undefined && serviceUrl !== undefined) {
    throw new BabelQueueError('BabelPulsarClient takes either client or serviceUrl, not both');
  }
  if (client === undefined && serviceUrl === undefined) {
    throw new BabelQueueError('BabelPulsarClient needs a client (a ready Pulsar client) or a serviceUrl');
  }
  if (producers !== undefined && (producerOptions ?? producerOptionsByTopic) !== undefined) {
    throw new BabelQueueError(
      'options.producerOptions and options.producerOptionsByTopic apply to the producers this client creates; ' +
        'with options.producers, give them to that source (e.g. new BabelProducerPool(client, { producerOptions }))',
    );
  }
  // Checked now (against the client when it is given), so that a setting the client cannot honour fails here.
  const producerSettings = checkedProducerSettings(
    client ?? kindOf(serviceUrl),
    { producerOptions, producerOptionsByTopic },
    'options.',
    raiseClientError,
  );
  return {
    client,
    topic,
    tracing: telemetry.tracing,
    publishTimeoutMs,
    requestTimeoutMs,
    replyNamespace: replyNamespace ?? replyNamespaceOf(topic),
    producerSettings,
  };
}
