import { checkRetryPolicy, type RetryPolicy } from '../../consumer/index.js';
import { checkCircuitBreakerOptions, type CircuitBreakerOptions } from '../../consumer/circuit-breaker.js';
import { describeValue } from '../../describe-value.js';
import { option, type RaiseOptionError } from '../../options/option-table.js';
import { integer, oneOf } from '../../options/validators.js';
import { UNKNOWN_URN_STRATEGIES } from '../../consumer/unknown-urn.js';
import { SUBSCRIPTION_TYPES } from '../../pulsar/subscription-types.js';
import { ON_EXHAUSTED, ORDERINGS } from './ordering-option.js';
import { topicOption } from './topic-option.js';

function subscriptionName(value: unknown, name: string, raise: RaiseOptionError): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    return raise(`${name} must be a non-blank string such as "billing", got ${describeValue(value)}`, 'type');
  return value.trim();
}

/**
 * The per-subscription settings, each declared once: the server's table, the decorator's and the `handlers`
 * configuration's take these rows, so a setting is checked by one validator on every path. A table that gives the
 * setting a default wraps the row (`withDefault`).
 */
export const sharedRows = {
  topic: () => topicOption(),
  subscription: () => option<string>(subscriptionName),
  subscriptionType: () => oneOf(SUBSCRIPTION_TYPES, undefined, `one of ${SUBSCRIPTION_TYPES.join(', ')}`),
  maxAttempts: () => integer({ min: 1 }),
  concurrency: () => integer({ min: 1 }),
  unknownUrn: () => oneOf(UNKNOWN_URN_STRATEGIES),
  ordering: () => oneOf(ORDERINGS),
  onExhausted: () => oneOf(ON_EXHAUSTED),
  retryPolicy: () => option<RetryPolicy>((value, name, raise) => checkRetryPolicy(value, name, raise)),
  inbox: () =>
    option<boolean>((value, name, raise) => {
      if (value !== undefined && typeof value !== 'boolean') return raise(`${name} must be true or false`, 'type');
      return value as boolean | undefined;
    }),
  circuitBreaker: () =>
    option<boolean | Partial<CircuitBreakerOptions>, CircuitBreakerOptions | undefined>((value, name, raise) =>
      checkCircuitBreakerOptions(value, name, raise),
    ),
  maxPerSecond: () =>
    option<number>((value, name, raise) => {
      if (value === undefined) return undefined;
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
        return raise(`${name} must be a positive number, got ${describeValue(value)}`, 'range');
      return value;
    }),
};
