import { raiseStandardError, type RaiseOptionError } from '../options/option-table.js';
/**
 * Which OpenTelemetry signals the library produces when `@opentelemetry/api` is installed. Both default to on;
 * `false` turns both off (then the API is not even imported).
 */
export interface TelemetryOptions {
  /** `publish <urn>` / `process <urn>` spans and the `traceparent` / `tracestate` sent on publish. Default true. */
  tracing?: boolean;
  /** The consumer's metrics (`babelqueue.messages.*`, `babelqueue.handler.duration`). Default true. */
  metrics?: boolean;
}

/** `true` / `false` for every signal, or one switch per signal. */
export type TelemetryOption = boolean | TelemetryOptions;

export interface ResolvedTelemetry {
  tracing: boolean;
  metrics: boolean;
}

const TELEMETRY_KEYS = ['tracing', 'metrics'] as const;
const SHAPE = 'true, false or { tracing?: boolean, metrics?: boolean }';

const shown = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/** Validates a `telemetry` option named `name`; throws a TypeError naming it and what is allowed. */
export function resolveTelemetry(
  value: unknown,
  name: string,
  raise: RaiseOptionError = raiseStandardError,
): ResolvedTelemetry {
  if (value === undefined) return { tracing: true, metrics: true };
  if (typeof value === 'boolean') return { tracing: value, metrics: value };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return raise(`${name} must be ${SHAPE}, got ${Array.isArray(value) ? 'an array' : shown(value)}`, 'type');
  }
  for (const key of Object.keys(value)) {
    if (!(TELEMETRY_KEYS as readonly string[]).includes(key)) {
      return raise(`${name}.${key} is not an option; allowed: ${TELEMETRY_KEYS.join(', ')}`, 'type');
    }
  }
  const options = value as Record<string, unknown>;
  const resolved: ResolvedTelemetry = { tracing: true, metrics: true };
  for (const key of TELEMETRY_KEYS) {
    const flag = options[key];
    if (flag === undefined) continue;
    if (typeof flag !== 'boolean') return raise(`${name}.${key} must be true or false, got ${shown(flag)}`, 'type');
    resolved[key] = flag;
  }
  return resolved;
}
