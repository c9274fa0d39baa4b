import { raiseStandardError, type RaiseOptionError } from '../options/option-table.js';
import { describeValue } from '../describe-value.js';
/**
 * How long a retry copy waits on the broker before it is delivered again. Without a policy a retry is due
 * at once; with one, the copy carries Pulsar's delivery time and `bq-delay` (docs/contract.md#delays).
 */
export interface RetryPolicy {
  /** `exponential`: initialDelayMs × 2^(retry − 1); `fixed`: initialDelayMs for every retry. */
  backoff: 'exponential' | 'fixed';
  /** Delay before the first retry, ms (> 0). */
  initialDelayMs: number;
  /** Upper bound of any one delay, ms. Default 300000 (5 min); never below initialDelayMs. */
  maxDelayMs?: number;
  /**
   * Fraction 0..1 of each delay that is randomised, so retries of many messages that failed together spread
   * out: the delay is drawn uniformly from [delay × (1 − jitter), delay]. 0 (default) = exact delays;
   * 1 = "full jitter" (anywhere from 0 to the delay).
   */
  jitter?: number;
}

export const DEFAULT_MAX_RETRY_DELAY_MS = 300_000;

/**
 * The delay (whole ms) before retry number `retry` (1 = the first retry, made after the first delivery
 * failed). `sample` is a number in [0, 1) drawn by the caller (Math.random in production), so this stays pure.
 */
export function retryDelayMs(policy: RetryPolicy | undefined, retry: number, sample = 0): number {
  if (!policy) return 0;
  const cap = Math.max(policy.maxDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS, policy.initialDelayMs);
  const exponent = policy.backoff === 'exponential' ? Math.max(0, retry - 1) : 0;
  // Math.min before multiplying further keeps 2^exponent from overflowing into Infinity for large retries.
  const base = Math.min(cap, policy.initialDelayMs * 2 ** Math.min(exponent, 64));
  const jitter = policy.jitter ?? 0;
  const clampedSample = Math.min(Math.max(sample, 0), 1);
  return Math.round(base * (1 - jitter * clampedSample));
}

/** Checks a retry policy, with an error naming the option (`where`) and what is allowed. */
export function checkRetryPolicy(
  policy: unknown,
  where: string,
  raise: RaiseOptionError = raiseStandardError,
): RetryPolicy | undefined {
  if (policy === undefined) return undefined;
  if (typeof policy !== 'object' || policy === null) {
    return raise(`${where} must be an object { backoff, initialDelayMs, maxDelayMs?, jitter? }`, 'type');
  }
  const { backoff, initialDelayMs, maxDelayMs, jitter, ...rest } = policy as Record<string, unknown>;
  const unknownKeys = Object.keys(rest);
  if (unknownKeys.length > 0) {
    return raise(
      `${where} has unknown key(s) ${unknownKeys.join(', ')} (allowed: backoff, initialDelayMs, maxDelayMs, jitter)`,
      'type',
    );
  }
  if (backoff !== 'exponential' && backoff !== 'fixed') {
    return raise(`${where}.backoff must be 'exponential' or 'fixed', got ${describeValue(backoff)}`, 'type');
  }
  const wholeMs = (name: string, value: unknown, min: number): void => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      raise(`${where}.${name} must be a whole number of ms >= ${min}, got ${describeValue(value)}`, 'range');
    }
  };
  wholeMs('initialDelayMs', initialDelayMs, 1);
  if (maxDelayMs !== undefined) wholeMs('maxDelayMs', maxDelayMs, initialDelayMs as number);
  if (jitter !== undefined && !(typeof jitter === 'number' && jitter >= 0 && jitter <= 1)) {
    raise(`${where}.jitter must be a fraction from 0 to 1, got ${describeValue(jitter)}`, 'range');
  }
  return policy as RetryPolicy;
}
