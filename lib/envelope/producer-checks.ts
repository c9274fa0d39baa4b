/**
 * What a producer (the publisher, the outbox writer) refuses before it makes an envelope: the one place these
 * rules are written. The codec itself stays tolerant (JSON.stringify semantics), since it also re-encodes what
 * other SDKs sent; only what this library is asked to send new is held to them.
 */

/** Built-ins that are objects but not JSON objects; a DTO class instance is accepted. */
const NOT_DATA: ReadonlyArray<abstract new (...args: never[]) => unknown> = [
  Date,
  Map,
  Set,
  WeakMap,
  WeakSet,
  RegExp,
  Error,
  Promise,
  ArrayBuffer,
  Number,
  String,
  Boolean,
];

/** The envelope's `data`: an object, not an array, a buffer or one of the built-ins JSON has no object for. */
export function isMessageData(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value)) return false;
  return !NOT_DATA.some((type) => value instanceof type);
}

/**
 * `urn:` followed by a name without whitespace or control characters (the BabelQueue form is
 * `urn:babel:<context>:<event>`; the rest of the name is not enforced, as in the other SDKs' producers).
 */
const URN_SHAPE = /^urn:[^\s\p{Cc}]+$/iu;

const shown = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : String(value);

/** Why `urn` cannot name a new message (null when it can). Leading and trailing blanks are trimmed first. */
export function urnProblem(urn: unknown): string | null {
  if (typeof urn !== 'string' || urn.trim() === '') return `a non-blank URN is required, got ${shown(urn)}`;
  if (!URN_SHAPE.test(urn.trim())) {
    return (
      `${shown(urn)} is not a URN: it must be "urn:" followed by a name without spaces, ` +
      'e.g. "urn:babel:orders:created"'
    );
  }
  return null;
}

/** Deeper than this the codec's own limits apply; the walk stops rather than overflow the stack. */
const MAX_DEPTH = 512;

const memberPath = (parent: string, key: string): string =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;

function valueProblem(value: unknown, path: string, seen: Set<object>, depth: number): string | null {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? null : `${path} is ${String(value)}, which JSON can only write as null`;
    case 'undefined':
      return `${path} is undefined, which JSON leaves out (use null, or omit the key)`;
    case 'function':
      return `${path} is a function, which JSON leaves out`;
    case 'symbol':
      return `${path} is a symbol, which JSON leaves out`;
    case 'object':
      break;
    default:
      return null; // string, boolean, bigint (written as its digits)
  }
  if (value === null || seen.has(value) || depth > MAX_DEPTH) return null; // a cycle is the encoder's error
  if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet) {
    return `${path} is a ${value.constructor.name}, which JSON writes as {}`;
  }
  // A toJSON (Date, a DTO's own) says on purpose what is written: it is trusted.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function' || ArrayBuffer.isView(value)) return null;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        // A hole reads as undefined and is written as null.
        const problem = valueProblem(value[index], `${path}[${index}]`, seen, depth + 1);
        if (problem) return problem;
      }
      return null;
    }
    for (const key of Object.keys(value)) {
      const problem = valueProblem((value as Record<string, unknown>)[key], memberPath(path, key), seen, depth + 1);
      if (problem) return problem;
    }
    return null;
  } finally {
    seen.delete(value);
  }
}

/**
 * The first value in `data` that JSON would not carry as it is (NaN and ±Infinity become null; undefined,
 * functions and symbols vanish; a Map or Set becomes {}), named by its path (`data.items[2].price`); null when
 * every value survives the trip.
 */
export function lossyDataProblem(data: Record<string, unknown>): string | null {
  return valueProblem(data, 'data', new Set(), 0);
}
