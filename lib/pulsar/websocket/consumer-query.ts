/** The query of a consumer's WebSocket URL: its subscription settings and the pass-through ones. */
import type { PulsarConsumerConfig, SubscriptionType } from '../client-types.js';
import { PulsarWebSocketError } from './errors.js';
import { checkMs } from './options.js';
import { addPassThroughQuery } from './wire-options.js';

const WIRE_SUBSCRIPTION_TYPES: Record<SubscriptionType, string> = {
  Exclusive: 'Exclusive',
  Shared: 'Shared',
  KeyShared: 'Key_Shared',
  Failover: 'Failover',
};

/** An InvalidArgument error of the consumer of `topic`. */
export function invalid(topic: string, message: string): PulsarWebSocketError {
  return new PulsarWebSocketError(message, { code: 'InvalidArgument', topic });
}

/** What the consumer maps itself; the rest are the pass-through settings. */
const CONSUMER_OWN_KEYS = [
  'topic',
  'subscription',
  'subscriptionType',
  'nAckRedeliverTimeoutMs',
  'subscriptionInitialPosition',
] as const;

export function buildConsumerQuery(topic: string, config: PulsarConsumerConfig): URLSearchParams {
  const query = new URLSearchParams();
  const type = config.subscriptionType ?? 'Exclusive';
  const wireType = Object.hasOwn(WIRE_SUBSCRIPTION_TYPES, type) ? WIRE_SUBSCRIPTION_TYPES[type] : undefined;
  if (!wireType) {
    throw invalid(topic, `subscriptionType must be one of Exclusive, Shared, KeyShared, Failover; got ${String(type)}`);
  }
  query.set('subscriptionType', wireType);
  const nackDelay = checkMs('nAckRedeliverTimeoutMs', config.nAckRedeliverTimeoutMs);
  if (nackDelay !== undefined) query.set('negativeAckRedeliveryDelay', String(nackDelay));
  if (config.subscriptionInitialPosition !== undefined) {
    if (config.subscriptionInitialPosition !== 'Latest' && config.subscriptionInitialPosition !== 'Earliest') {
      throw invalid(topic, `subscriptionInitialPosition must be Latest or Earliest`);
    }
    query.set('subscriptionInitialPosition', config.subscriptionInitialPosition);
  }
  addPassThroughQuery('consumer', topic, config, CONSUMER_OWN_KEYS, query);
  return query;
}
