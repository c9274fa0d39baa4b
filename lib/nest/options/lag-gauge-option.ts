// The `lagGauges` option (docs/operations.md#lag-gauges): where the admin API is and how often it is asked.
import { describeValue } from '../../describe-value.js';
import type { RaiseOptionError } from '../../options/option-table.js';

export interface LagGaugeSetting {
  /** The broker's admin API (its web service), e.g. `http://broker:8080`. */
  adminUrl: string;
  /** How often each topic's stats are read, ms (at least 1000). Default 15000. */
  intervalMs?: number;
  /** A bearer token for a secured cluster. */
  token?: string;
}

const KEYS = ['adminUrl', 'intervalMs', 'token'];

export function checkLagGauges(
  value: unknown,
  name: string,
  raise: RaiseOptionError,
): (Required<Omit<LagGaugeSetting, 'token'>> & Pick<LagGaugeSetting, 'token'>) | undefined {
  if (value === undefined || value === false) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return raise(`${name} must be { adminUrl, intervalMs?, token? } or false, got ${describeValue(value)}`, 'type');
  const { adminUrl, intervalMs = 15_000, token, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    return raise(`${name} has unknown key(s) ${unknown.join(', ')} (allowed: ${KEYS.join(', ')})`, 'type');
  if (typeof adminUrl !== 'string' || !URL.canParse(adminUrl))
    return raise(
      `${name}.adminUrl must be the admin API's URL (http://broker:8080), got ${describeValue(adminUrl)}`,
      'type',
    );
  if (typeof intervalMs !== 'number' || !Number.isInteger(intervalMs) || intervalMs < 1000)
    return raise(`${name}.intervalMs must be an integer >= 1000, got ${describeValue(intervalMs)}`, 'range');
  if (token !== undefined && (typeof token !== 'string' || token === ''))
    return raise(`${name}.token must be a non-blank string`, 'type');
  return { adminUrl, intervalMs, ...(token !== undefined && { token }) };
}
