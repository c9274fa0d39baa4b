import { randomUUID } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { BabelQueueError } from './errors.js';
import { parseJson } from './json.js';
import { JsonCycleError, nativeWriteIsExact, stringifyObject, type ObjectShape } from './json-serializer.js';
import { copyRawInfo, forgetRaw } from './raw-numbers.js';
import { setOwn } from './set-own.js';
import { BOM_ERROR, decodeUtf8 } from './utf8.js';
import type { DecodeOptions, DecodeResult, Envelope, MakeOptions } from './types.js';
import { errorText } from './error-text.js';

type Obj = Record<string, unknown>;

/** Non-canonical keys (docs/contract.md#the-envelope): dropped on decode with a warning, never written. */
const FORBIDDEN_ROOT: ReadonlySet<string> = new Set(['timestamp']);
const FORBIDDEN_META: ReadonlySet<string> = new Set(['max_retries', 'attempts', 'source', 'ts']);

/** JSON pointers of the forbidden keys. */
export const FORBIDDEN_KEY_POINTERS: readonly string[] = [
  ...[...FORBIDDEN_ROOT].map((k) => `/${k}`),
  ...[...FORBIDDEN_META].map((k) => `/meta/${k}`),
];

/** Canonical root order (docs/contract.md#the-envelope); forbidden keys left out at the root and in meta. */
const ENVELOPE_SHAPE: ObjectShape = {
  first: ['job', 'trace_id', 'data', 'meta', 'attempts', 'dead_letter'],
  skip: FORBIDDEN_ROOT,
  children: new Map([['meta', { skip: FORBIDDEN_META }]]),
};

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBlank = (v: string): boolean => v.trim() === '';

/** How a value reads in an error message. */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return v.length > 64 ? `${JSON.stringify(v.slice(0, 64))}…` : JSON.stringify(v);
  return `${typeof v} ${String(v)}`;
}

function jsonKind(v: unknown): string {
  if (v === null) return 'JSON null';
  if (Array.isArray(v)) return 'a JSON array';
  return `a JSON ${typeof v}`;
}

/** True when `job` does not name the message, so the `urn` alias may (a falsy or blank job). */
const jobFallsBack = (job: unknown): boolean => !job || (typeof job === 'string' && isBlank(job));

function make(urn: string, data?: Obj, options: MakeOptions = {}): Envelope {
  const job = typeof urn === 'string' ? urn.trim() : '';
  if (job === '') throw new BabelQueueError('a non-empty URN is required to make an envelope');
  if (data !== undefined && data !== null && !isObject(data)) {
    throw new BabelQueueError(`envelope data must be a plain object, got ${describe(data)}`);
  }
  const { traceId, queue, id } = options;
  return {
    job,
    trace_id: typeof traceId === 'string' && !isBlank(traceId) ? traceId.trim() : randomUUID(),
    data: { ...data }, // spread copies an own "__proto__" key as data, never as a prototype
    meta: {
      id: typeof id === 'string' && !isBlank(id) ? id.trim() : randomUUID(),
      queue: typeof queue === 'string' && !isBlank(queue) ? queue : 'default',
      lang: 'node',
      schema_version: 1,
      created_at: Date.now(),
    },
    attempts: 0,
  };
}

const ROOT_ORDER = ENVELOPE_SHAPE.first!;

/** True when JSON.stringify writes the envelope exactly as the shaped writer would. */
function nativeEncodeIsExact(envelope: Obj): boolean {
  for (const key of FORBIDDEN_ROOT) if (Object.prototype.hasOwnProperty.call(envelope, key)) return false;
  const meta = envelope.meta;
  if (isObject(meta))
    for (const key of FORBIDDEN_META) if (Object.prototype.hasOwnProperty.call(meta, key)) return false;
  const keys = Object.keys(envelope);
  let at = 0;
  for (const key of ROOT_ORDER) {
    if (Object.prototype.hasOwnProperty.call(envelope, key) && keys[at++] !== key) return false;
  }
  return nativeWriteIsExact(envelope);
}

function encode(envelope: Envelope | Obj): string {
  if (!isObject(envelope)) throw new BabelQueueError(`cannot encode ${describe(envelope)} as an envelope`);
  if (nativeEncodeIsExact(envelope)) return JSON.stringify(envelope);
  try {
    return stringifyObject(envelope, ENVELOPE_SHAPE);
  } catch (error) {
    if (error instanceof JsonCycleError)
      throw new BabelQueueError('cannot encode an envelope that contains a cycle', { cause: error });
    throw error;
  }
}

function encodeToBuffer(envelope: Envelope | Obj): Buffer {
  return Buffer.from(encode(envelope), 'utf8');
}

function decode(input: Buffer | Uint8Array | string, options: DecodeOptions = {}): DecodeResult {
  const warnings: string[] = [];
  const rejected = (error: string): DecodeResult => ({ envelope: {}, error, warnings });
  try {
    let text: string;
    if (typeof input === 'string') {
      if (input.charCodeAt(0) === 0xfeff) return rejected(BOM_ERROR);
      text = input;
    } else if (input instanceof Uint8Array) {
      const utf8 = decodeUtf8(input);
      if (!utf8.ok) return rejected(utf8.error);
      text = utf8.text;
    } else {
      return rejected(`payload must be bytes or a string, got ${describe(input)}`);
    }
    const parsed = parseJson(text);
    if (!parsed.ok) return rejected(`payload is not valid JSON: ${parsed.error}`);
    const envelope = parsed.value;
    if (!isObject(envelope)) return rejected(`payload is ${jsonKind(envelope)}, not an object`);
    dropForbidden(envelope, warnings, options.onWarning);
    if (jobFallsBack(envelope.job) && typeof envelope.urn === 'string') {
      setOwn(envelope, 'job', envelope.urn);
      delete envelope.urn; // re-encoded as canonical `job` only
    }
    return { envelope, error: null, warnings };
  } catch (error) {
    // Unreachable by design (the parser reports its own errors); decode still never throws.
    return rejected(`payload could not be decoded: ${errorText(error)}`);
  }
}

function dropForbidden(envelope: Obj, warnings: string[], onWarning: ((message: string) => void) | undefined): void {
  const drop = (target: Obj, keys: ReadonlySet<string>, prefix: string): void => {
    for (const key of keys) {
      if (!Object.prototype.hasOwnProperty.call(target, key)) continue;
      delete target[key];
      const message = `dropped forbidden envelope key '${prefix}/${key}'`;
      warnings.push(message);
      try {
        onWarning?.(message);
      } catch {
        // A failing logger must not turn a good message into a bad one.
      }
    }
  };
  drop(envelope, FORBIDDEN_ROOT, '');
  if (isObject(envelope.meta)) drop(envelope.meta, FORBIDDEN_META, '/meta');
}

/** `job`, else the `urn` alias, trimmed; '' when neither names the message. */
function urn(envelope: unknown): string {
  if (!isObject(envelope)) return '';
  const job = envelope.job;
  if (typeof job === 'string' && !isBlank(job)) return job.trim();
  if (jobFallsBack(job) && typeof envelope.urn === 'string') return envelope.urn.trim();
  return '';
}

/** null when accepted; otherwise the first validation rule that fails, in the order the core checks them. */
function rejection(envelope: unknown): string | null {
  if (!isObject(envelope)) return `the envelope must be an object, got ${describe(envelope)}`;
  if (urn(envelope) === '') return "the envelope has no URN: 'job' (or its 'urn' alias) must be a non-empty string";
  const meta = envelope.meta;
  if (!isObject(meta)) return `'meta' must be an object, got ${describe(meta)}`;
  if (meta.schema_version !== 1)
    return `'meta.schema_version' must be the number 1, got ${describe(meta.schema_version)}`;
  if (!isObject(envelope.data)) return `'data' must be an object, got ${describe(envelope.data)}`;
  const attempts = envelope.attempts;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts))
    return `'attempts' must be an integer, got ${describe(attempts)}`;
  const traceId = envelope.trace_id;
  if (typeof traceId !== 'string' || isBlank(traceId))
    return `'trace_id' must be a non-blank string, got ${describe(traceId)}`;
  return null;
}

function accepts(envelope: unknown): envelope is Envelope {
  return rejection(envelope) === null;
}

/** Shallow copy that keeps key order, own `__proto__`-like keys and the recorded number texts. */
function copyEnvelope(envelope: Obj): Obj {
  const copy: Obj = {};
  for (const key of Object.keys(envelope)) setOwn(copy, key, envelope[key]);
  copyRawInfo(envelope, copy);
  return copy;
}

function withAttempts(envelope: Envelope, attempts: number): Envelope {
  if (!isObject(envelope)) throw new BabelQueueError(`cannot copy ${describe(envelope)} as an envelope`);
  // Any integer: accepts() lets negative and huge counters through, so a copy must not throw on them.
  if (typeof attempts !== 'number' || !Number.isInteger(attempts)) {
    throw new BabelQueueError(`attempts must be an integer, got ${describe(attempts)}`);
  }
  const copy = copyEnvelope(envelope);
  copy.attempts = attempts;
  forgetRaw(copy, 'attempts'); // a replaced counter is written fresh ("2", not a received "2.0")
  return copy as Envelope;
}

export const EnvelopeCodec = {
  make,
  encode,
  encodeToBuffer,
  decode,
  accepts,
  rejection,
  urn,
  withAttempts,
} as const;
