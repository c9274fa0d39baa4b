/**
 * The Pulsar binding of the BabelQueue contract (docs/contract.md): property projection, attempts
 * reconciliation, the `bq-schema-version` gate and `bq-job` routing.
 */
import { EnvelopeCodec } from '../envelope/index.js';
import type { Envelope } from '../envelope/index.js';

/** Pulsar property names used by the binding. */
export const BQ = {
  job: 'bq-job',
  traceId: 'bq-trace-id',
  messageId: 'bq-message-id',
  schemaVersion: 'bq-schema-version',
  sourceLang: 'bq-source-lang',
  attempts: 'bq-attempts',
  delay: 'bq-delay',
  replayBypass: 'bq-replay-bypass',
} as const;

/** Largest value of a signed 32-bit int: a larger `bq-attempts` is ignored. */
const INT32_MAX = 2147483647;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Decimal text of an integer without exponent notation (1e21 → "1000000000000000000000"). */
const integerText = (n: number): string => (Number.isSafeInteger(n) ? String(n) : BigInt(n).toString());

/**
 * Exactly the six `bq-*` properties of the contract, all strings: empty job / trace id / message id /
 * lang are left out; `bq-schema-version` whenever `meta` is an object with a number or string
 * version; `bq-attempts` always ("0" unless `attempts` is an integer).
 */
export function pulsarProperties(envelope: Envelope | Record<string, unknown>): Record<string, string> {
  const properties: Record<string, string> = {};
  const env: Obj = isObject(envelope) ? envelope : {};
  if (nonEmptyString(env.job)) properties[BQ.job] = env.job;
  if (nonEmptyString(env.trace_id)) properties[BQ.traceId] = env.trace_id;
  const meta = env.meta;
  if (isObject(meta)) {
    if (nonEmptyString(meta.id)) properties[BQ.messageId] = meta.id;
    const version = meta.schema_version;
    if (typeof version === 'number' && Number.isFinite(version)) properties[BQ.schemaVersion] = String(version);
    else if (typeof version === 'string') properties[BQ.schemaVersion] = version;
    if (nonEmptyString(meta.lang)) properties[BQ.sourceLang] = meta.lang;
  }
  const attempts = env.attempts;
  properties[BQ.attempts] = typeof attempts === 'number' && Number.isInteger(attempts) ? integerText(attempts) : '0';
  return properties;
}

export interface ReconcileAttemptsInput {
  /** The body's `attempts` (used when the property is absent or unusable). */
  bodyAttempts: unknown;
  /** The `bq-attempts` property as received. */
  attemptsProperty?: string | undefined;
  /** Pulsar's 0-based redelivery count. */
  redeliveryCount: number;
}

/**
 * Attempts (docs/contract.md#retries): base = `bq-attempts` when it matches ^[0-9]+$ and fits a signed 32-bit int, else the
 * body's attempts; then max(base, redelivery count). The count is 0-based, so no −1.
 */
export function reconcileAttempts(input: ReconcileAttemptsInput): number {
  const property = input.attemptsProperty;
  let base: number;
  if (typeof property === 'string' && /^[0-9]+$/.test(property) && Number(property) <= INT32_MAX) {
    base = Number(property);
  } else {
    const body = input.bodyAttempts;
    base = typeof body === 'number' && Number.isInteger(body) ? body : 0;
  }
  const count = input.redeliveryCount;
  const redelivered = typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : 0;
  return Math.max(base, redelivered);
}

/** Blank per GR-5: absent, '' or only the six ASCII whitespace characters [ \t\n\v\f\r]. */
export function isBlankProperty(value: string | undefined): boolean {
  return value === undefined || value === null || /^[ \t\n\v\f\r]*$/.test(value);
}

/**
 * The schema-version gate, read before the body is decoded: absent or blank → 'decode'; otherwise the value is
 * compared with "1" exactly as sent (never trimmed).
 */
export function schemaVersionGate(propertyValue: string | undefined): 'decode' | 'reject' {
  if (isBlankProperty(propertyValue)) return 'decode';
  return propertyValue === '1' ? 'decode' : 'reject';
}

export interface RoutingUrn {
  /** The URN that routes: the property's when set, else the body's ('' when neither). */
  urn: string;
  /** `bq-job` with [ \t\n\v\f\r] trimmed from both ends; '' when absent or blank. */
  propertyUrn: string;
  /** EnvelopeCodec.urn(envelope): `job`, else `urn`, trimmed. */
  bodyUrn: string;
  /** Both are present and differ: the property routes and onRoutingMismatch is due. */
  mismatch: boolean;
}

const isAsciiSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/** Trims exactly [ \t\n\v\f\r] (a loop: a trailing-whitespace regex is quadratic on hostile input). */
function trimAsciiWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isAsciiSpace(value.charCodeAt(start))) start++;
  while (end > start && isAsciiSpace(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

/** The routing URN (docs/contract.md#routing). */
export function routingUrn(properties: Record<string, string>, envelope: unknown): RoutingUrn {
  const raw = properties?.[BQ.job];
  const propertyUrn = typeof raw === 'string' ? trimAsciiWhitespace(raw) : '';
  const bodyUrn = EnvelopeCodec.urn(envelope);
  return {
    urn: propertyUrn !== '' ? propertyUrn : bodyUrn,
    propertyUrn,
    bodyUrn,
    mismatch: propertyUrn !== '' && bodyUrn !== '' && propertyUrn !== bodyUrn,
  };
}
