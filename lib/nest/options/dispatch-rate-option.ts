// The `dispatchRate` option (docs/retries.md#across-instances): a subscription-wide rate the broker enforces.
import { describeValue } from '../../describe-value.js';
import type { RaiseOptionError } from '../../options/option-table.js';

export interface DispatchRateSetting {
  /** Messages the broker delivers to the subscription per second at most, all instances together (an integer). */
  perSecond: number;
  /** The broker's admin API (its web service), e.g. `http://broker:8080`. Default: the client's broker. */
  adminUrl?: string;
  /** A bearer token for the admin API; default: the client's credentials (with `adminUrl`: none). */
  token?: string;
}

const KEYS = ['perSecond', 'adminUrl', 'token'];

export function checkDispatchRate(
  value: unknown,
  name: string,
  raise: RaiseOptionError,
): DispatchRateSetting | undefined {
  if (value === undefined || value === false) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return raise(`${name} must be { perSecond, adminUrl?, token? } or false, got ${describeValue(value)}`, 'type');
  const { perSecond, adminUrl, token, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    return raise(`${name} has unknown key(s) ${unknown.join(', ')} (allowed: ${KEYS.join(', ')})`, 'type');
  // The broker's policy counts whole messages per second.
  if (typeof perSecond !== 'number' || !Number.isInteger(perSecond) || perSecond < 1)
    return raise(`${name}.perSecond must be an integer >= 1, got ${describeValue(perSecond)}`, 'range');
  if (
    adminUrl !== undefined &&
    (typeof adminUrl !== 'string' || !/^https?:\/\//i.test(adminUrl) || !URL.canParse(adminUrl))
  )
    return raise(
      `${name}.adminUrl must be the admin API's http(s) URL (http://broker:8080), got ${describeValue(adminUrl)}`,
      'type',
    );
  if (token !== undefined && (typeof token !== 'string' || token.trim() === ''))
    return raise(`${name}.token must be a non-blank string`, 'type');
  return {
    perSecond,
    ...(adminUrl !== undefined && { adminUrl }),
    ...(token !== undefined && { token }),
  };
}
