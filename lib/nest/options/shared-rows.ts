import { checkRetryPolicy, type RetryPolicy } from '../../consumer/index.js';
import { checkCircuitBreakerOptions, type CircuitBreakerOptions } from '../../consumer/circuit-breaker.js';
import { describeValue } from '../../describe-value.js';
import { option } from '../../options/option-table.js';

/**
 * Rows more than one option table takes as they are (the server's, the decorator's, the `handlers` configuration's):
 * each setting checked by one validator. A table that gives the setting a default declares its own row.
 */
export const sharedRows = {
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
