import { createHash } from 'node:crypto';

const HEX32 = /^[0-9a-f]{32}$/;
const ZERO_TRACE = '0'.repeat(32);

/**
 * The OpenTelemetry trace id (32 lowercase hex digits) of an envelope `trace_id`, as the other BabelQueue SDKs
 * map it: a UUID (32 hex digits once its dashes are removed) byte for byte; anything else, and the all-zero
 * id OTel calls invalid, the first 16 bytes of its SHA-256.
 */
export function otelTraceIdOf(traceId: string): string {
  const hex = traceId.replace(/-/g, '').toLowerCase();
  if (HEX32.test(hex) && hex !== ZERO_TRACE) return hex;
  const digest = createHash('sha256').update(traceId, 'utf8').digest('hex').slice(0, 32);
  return digest === ZERO_TRACE ? '0'.repeat(31) + '1' : digest;
}

/** An OTel trace id (32 hex digits) written as a UUID: the form a producer stamps into `trace_id`. */
export function uuidOfOtelTraceId(traceId: string): string {
  const h = traceId.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The span id of the remote parent derived from a `trace_id` when a message has no `traceparent` (first 8 bytes
 * of SHA-256 of "babelqueue-span:" + trace_id, as the Go and Python SDKs derive it; never zero).
 */
export function parentSpanIdOf(traceId: string): string {
  const hex = createHash('sha256').update(`babelqueue-span:${traceId}`, 'utf8').digest('hex').slice(0, 16);
  return hex === '0'.repeat(16) ? '0'.repeat(15) + '1' : hex;
}

export interface TraceParent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Parses a W3C `traceparent` as the standard propagator does: version `ff` is invalid, the ids must not be all
 * zero, and version `00` takes no trailing parts. Anything malformed gives undefined (the header is ignored).
 */
export function parseTraceParent(value: string | undefined): TraceParent | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === '0'.repeat(16)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) };
}

/** A `traceparent` header value (version 00). */
export function formatTraceParent({ traceId, spanId, traceFlags }: TraceParent): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
