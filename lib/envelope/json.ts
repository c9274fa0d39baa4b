/**
 * A strict RFC 8259 parser and a matching serializer that keep numbers exact.
 *
 * Handlers get plain JS values, but the text of every number that String(value) would not
 * reproduce (2^53+ integers, `1.0`, `1e2`, `-0`, long decimals) is remembered per container in
 * a private WeakMap. The serializer writes that text back while the value is unchanged, so a
 * decode → change attempts → encode round trip never alters a number it did not touch.
 *
 * Speed: most bodies have no such number, no array-index key and little nesting; for those the
 * native JSON.parse builds the identical result, and the JS parser runs only when a scan says
 * it may be needed.
 */

/** Deeper input is refused with an error instead of risking a stack overflow. */
export const MAX_DEPTH = 512;

type Container = object;
type Slot = string | number;

/** container → (key or index → raw number text), only for numbers String() would not reproduce. */
const RAW_NUMBERS = new WeakMap<Container, Map<Slot, string>>();
/**
 * object → key order as received, kept only for objects with array-index keys ("0", "12"),
 * which JS objects would otherwise move to the front.
 */
const KEY_ORDER = new WeakMap<Container, string[]>();

/** Names that plain assignment could route to Object.prototype (setter, or a frozen intrinsic). */
const PROTO_KEYS = new Set<string>(['__proto__', ...Object.getOwnPropertyNames(Object.prototype)]);
/** Shorter keys skip the set lookup (all of them are 7+ characters: "valueOf"). */
const MIN_PROTO_KEY = Math.min(...[...PROTO_KEYS].map((k) => k.length));

/** Sets an own, enumerable data property, never touching a prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key.length >= MIN_PROTO_KEY && PROTO_KEYS.has(key)) {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** Gives `to` the number texts and key order recorded for `from` (used by shallow copies). */
export function copyRawInfo(from: Container, to: Container): void {
  const raws = RAW_NUMBERS.get(from);
  if (raws !== undefined) RAW_NUMBERS.set(to, new Map(raws));
  const order = KEY_ORDER.get(from);
  if (order !== undefined) KEY_ORDER.set(to, order.slice());
}

/** The recorded text of the number at `key` of `container`, if String() would not reproduce it. */
export function rawNumberAt(container: Container, key: Slot): string | undefined {
  return RAW_NUMBERS.get(container)?.get(key);
}

/** Moves the recorded number text of one slot to another container's slot (or forgets it there). */
export function moveRawSlot(from: Container, fromKey: Slot, to: Container, toKey: Slot): void {
  const raw = RAW_NUMBERS.get(from)?.get(fromKey);
  if (raw === undefined) return forgetRaw(to, toKey);
  let raws = RAW_NUMBERS.get(to);
  if (!raws) RAW_NUMBERS.set(to, (raws = new Map()));
  raws.set(toKey, raw);
}

/** Forgets the recorded text at `key`, so the next write of that slot is fresh. */
export function forgetRaw(container: Container, key: Slot): void {
  RAW_NUMBERS.get(container)?.delete(key);
}

// ---------------------------------------------------------------------------------------------
// Parser. Module state keeps the hot loop free of closures; parse never calls user code, so it
// cannot be re-entered.

class JsonSyntaxError extends Error {}

let src = '';
let pos = 0;
/** Raw text of the number parseValue just returned, or undefined when String() reproduces it. */
let lastRaw: string | undefined;

export type ParseResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The native JSON.parse (same grammar, same values, own "__proto__" keys) is exact unless the
 * text has a number String() would not reproduce, an array-index key, or deep nesting.
 *
 * SUSPECT finds every such number and key; false positives (inside strings, say) only cost
 * speed. A number token follows ':', ',' or '[' (then whitespace). String() reproduces every
 * token with at most 15 significant digits (DBL_DIG) that has no exponent, no trailing zero in
 * its fraction, is not "-0" and is not below 1e-6; the alternatives flag the rest: "-0", an
 * exponent, a fraction ending in 0, 14+ digits in a row, "0.000000…". A key follows '{' or ',';
 * an array-index key begins with a digit or an escaped one (\u003X).
 */
const SUSPECT =
  /[:,[][ \t\n\r]*(?:-0(?![.0-9])|-?[0-9]+(?:\.[0-9]*)?[eE]|-?[0-9]+\.[0-9]*0(?![0-9])|-?[0-9][0-9.]{14}|-?0\.0{6})|[{,][ \t\n\r]*"(?:[0-9]|\\u003)/;

/** True when JSON.parse(text) is exactly what the JS parser would build and record. */
export function nativeParseIsExact(text: string): boolean {
  return !SUSPECT.test(text) && shallowEnough(text);
}

/** True when no nesting in `text` can exceed MAX_DEPTH (there are at most that many '[' and '{'). */
function shallowEnough(text: string): boolean {
  if (text.length <= 2 * MAX_DEPTH) return true;
  let opens = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++opens > MAX_DEPTH) return false;
    }
  }
  return true;
}

/** Parses strict RFC 8259 JSON; never throws. */
export function parseJson(text: string): ParseResult {
  if (nativeParseIsExact(text)) {
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      // fall through: the JS parser words the error
    }
  }
  return parseJsonStrict(text);
}

/** The JS parser alone (exported for tests that compare both paths). */
export function parseJsonStrict(text: string): ParseResult {
  src = text;
  pos = 0;
  try {
    skipWhitespace();
    const value = parseValue(0);
    skipWhitespace();
    if (pos < src.length) fail(`unexpected ${describeAt(pos)} after the JSON value`);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ok: false, error: error.message };
    throw error;
  } finally {
    src = '';
  }
}

function fail(message: string): never {
  throw new JsonSyntaxError(message);
}

function describeAt(at: number): string {
  if (at >= src.length) return 'end of input';
  const code = src.charCodeAt(at);
  const shown =
    code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : JSON.stringify(src[at]);
  return `character ${shown} at position ${at}`;
}

function skipWhitespace(): void {
  let c = src.charCodeAt(pos);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = src.charCodeAt(++pos);
}

function parseValue(depth: number): unknown {
  const c = src.charCodeAt(pos);
  if (c === 0x22) return parseString();
  if (c === 0x7b) return parseObject(depth + 1);
  if (c === 0x5b) return parseArray(depth + 1);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return parseNumber();
  if (c === 0x74) return parseLiteral('true', true);
  if (c === 0x66) return parseLiteral('false', false);
  if (c === 0x6e) return parseLiteral('null', null);
  return fail(`unexpected ${describeAt(pos)}`);
}

function parseLiteral(word: string, value: unknown): unknown {
  if (!src.startsWith(word, pos)) fail(`unexpected ${describeAt(pos)}`);
  pos += word.length;
  return value;
}

function parseObject(depth: number): Record<string, unknown> {
  if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels at position ${pos}`);
  pos++; // {
  const obj: Record<string, unknown> = {};
  let raws: Map<Slot, string> | undefined;
  let order: string[] | undefined;
  skipWhitespace();
  if (src.charCodeAt(pos) === 0x7d) {
    pos++;
    return obj;
  }
  for (;;) {
    if (src.charCodeAt(pos) !== 0x22) fail(`expected a string key, found ${describeAt(pos)}`);
    const key = parseString();
    skipWhitespace();
    if (src.charCodeAt(pos) !== 0x3a) fail(`expected ':' after an object key, found ${describeAt(pos)}`);
    pos++;
    skipWhitespace();
    const value = parseValue(depth);
    if (order === undefined) {
      const first = key.charCodeAt(0);
      if (first >= 0x30 && first <= 0x39 && isArrayIndex(key)) order = Object.keys(obj);
    }
    if (order !== undefined && !Object.prototype.hasOwnProperty.call(obj, key)) order.push(key);
    setOwn(obj, key, value); // a duplicate key overwrites in place, as JSON.parse does
    if (typeof value === 'number' && lastRaw !== undefined) (raws ??= new Map()).set(key, lastRaw);
    else if (raws !== undefined) raws.delete(key);
    skipWhitespace();
    const c = src.charCodeAt(pos);
    if (c === 0x2c) {
      pos++;
      skipWhitespace();
    } else if (c === 0x7d) {
      pos++;
      break;
    } else fail(`expected ',' or '}' in an object, found ${describeAt(pos)}`);
  }
  if (raws !== undefined && raws.size > 0) RAW_NUMBERS.set(obj, raws);
  if (order !== undefined) KEY_ORDER.set(obj, order);
  return obj;
}

/** Keys JS orders numerically before all others: canonical uint32 strings below 2^32 - 1. */
function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9][0-9]{0,9})$/.test(key) && Number(key) < 4294967295;
}

function parseArray(depth: number): unknown[] {
  if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels at position ${pos}`);
  pos++; // [
  const arr: unknown[] = [];
  let raws: Map<Slot, string> | undefined;
  skipWhitespace();
  if (src.charCodeAt(pos) === 0x5d) {
    pos++;
    return arr;
  }
  for (;;) {
    const value = parseValue(depth);
    if (typeof value === 'number' && lastRaw !== undefined) (raws ??= new Map()).set(arr.length, lastRaw);
    arr.push(value);
    skipWhitespace();
    const c = src.charCodeAt(pos);
    if (c === 0x2c) {
      pos++;
      skipWhitespace();
    } else if (c === 0x5d) {
      pos++;
      break;
    } else fail(`expected ',' or ']' in an array, found ${describeAt(pos)}`);
  }
  if (raws !== undefined) RAW_NUMBERS.set(arr, raws);
  return arr;
}

function parseNumber(): number {
  const start = pos;
  let plain = true; // no fraction, no exponent
  if (src.charCodeAt(pos) === 0x2d) pos++;
  let c = src.charCodeAt(pos);
  if (c === 0x30) {
    c = src.charCodeAt(++pos);
  } else if (c >= 0x31 && c <= 0x39) {
    do c = src.charCodeAt(++pos);
    while (c >= 0x30 && c <= 0x39);
  } else fail(`expected a digit, found ${describeAt(pos)}`);
  if (c === 0x2e) {
    plain = false;
    c = src.charCodeAt(++pos);
    if (!(c >= 0x30 && c <= 0x39)) fail(`expected a digit after '.', found ${describeAt(pos)}`);
    do c = src.charCodeAt(++pos);
    while (c >= 0x30 && c <= 0x39);
  }
  if (c === 0x65 || c === 0x45) {
    plain = false;
    c = src.charCodeAt(++pos);
    if (c === 0x2b || c === 0x2d) c = src.charCodeAt(++pos);
    if (!(c >= 0x30 && c <= 0x39)) fail(`expected a digit in the exponent, found ${describeAt(pos)}`);
    do c = src.charCodeAt(++pos);
    while (c >= 0x30 && c <= 0x39);
  }
  const raw = src.slice(start, pos);
  const value = Number(raw);
  // Short integers always print back as written; anything else is checked.
  lastRaw = plain && raw.length <= 15 && raw !== '-0' ? undefined : String(value) === raw ? undefined : raw;
  return value;
}

function parseString(): string {
  const start = ++pos; // opening quote
  // Fast path: no escapes.
  for (;;) {
    const c = src.charCodeAt(pos);
    if (c === 0x22) {
      return src.slice(start, pos++);
    }
    if (c === 0x5c || c < 0x20 || Number.isNaN(c)) break;
    pos++;
  }
  let out = src.slice(start, pos);
  for (;;) {
    const c = src.charCodeAt(pos);
    if (Number.isNaN(c)) fail('unterminated string at end of input');
    if (c === 0x22) {
      pos++;
      return out;
    }
    if (c < 0x20)
      fail(
        `unescaped control character U+${c.toString(16).toUpperCase().padStart(4, '0')} at position ${pos} in a string`,
      );
    if (c !== 0x5c) {
      const runStart = pos;
      let d = c;
      while (d !== 0x22 && d !== 0x5c && d >= 0x20) d = src.charCodeAt(++pos);
      out += src.slice(runStart, pos);
      continue;
    }
    const e = src.charCodeAt(++pos);
    pos++;
    switch (e) {
      case 0x22:
        out += '"';
        break;
      case 0x5c:
        out += '\\';
        break;
      case 0x2f:
        out += '/';
        break;
      case 0x62:
        out += '\b';
        break;
      case 0x66:
        out += '\f';
        break;
      case 0x6e:
        out += '\n';
        break;
      case 0x72:
        out += '\r';
        break;
      case 0x74:
        out += '\t';
        break;
      case 0x75: {
        const hex = src.slice(pos, pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail(`invalid \\u escape at position ${pos - 2}`);
        // A lone surrogate escape is valid JSON grammar: kept as is, re-emitted escaped.
        out += String.fromCharCode(parseInt(hex, 16));
        pos += 4;
        break;
      }
      default:
        fail(`invalid escape at position ${pos - 2}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Serializer: JSON.stringify semantics (toJSON, undefined/function/symbol skipped in objects and
// null in arrays, non-finite → null), plus recorded number text, recorded key order, bigint as
// its digits, and a clear error on cycles.

export class JsonCycleError extends TypeError {}

/** Serialized text of `value`, or undefined when JSON.stringify would write nothing for it. */
export function stringifyJson(value: unknown): string | undefined {
  return writeValue(value, undefined, '', new Set());
}

/** How to write one object: `first` keys lead in that order, `skip` keys are never written. */
export interface ObjectShape {
  first?: readonly string[];
  skip?: ReadonlySet<string>;
  /** Shapes for plain-object members, by key. */
  children?: ReadonlyMap<string, ObjectShape>;
}

const NO_SHAPE: ObjectShape = {};

/** Serializes `obj` as a JSON object following `shape`; other keys keep their order. */
export function stringifyObject(
  obj: Record<string, unknown>,
  shape: ObjectShape = NO_SHAPE,
  seen: Set<object> = new Set(),
): string {
  if (seen.has(obj)) throw new JsonCycleError('cannot encode a circular structure');
  seen.add(obj);
  const raws = RAW_NUMBERS.get(obj);
  const { first, skip, children } = shape;
  let keys = orderedKeys(obj);
  if (first !== undefined || skip !== undefined) {
    const lead = first === undefined ? [] : first.filter((k) => Object.prototype.hasOwnProperty.call(obj, k));
    const rest = keys.filter(
      (k) => !(first !== undefined && first.includes(k)) && !(skip !== undefined && skip.has(k)),
    );
    keys = lead.length === 0 ? rest : lead.concat(rest);
  }
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = obj[key];
    const child = children?.get(key);
    const text =
      child !== undefined && isPlainMember(value)
        ? stringifyObject(value, child, seen)
        : writeValue(value, raws, key, seen);
    if (text === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + text;
  }
  seen.delete(obj);
  return out + '}';
}

function isPlainMember(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/** Own enumerable keys, in received order when one was recorded (array-index keys). */
function orderedKeys(obj: object): string[] {
  const keys = Object.keys(obj);
  const order = KEY_ORDER.get(obj);
  if (order === undefined) return keys;
  const present = new Set(keys);
  const result = order.filter((k) => present.has(k));
  const kept = new Set(result);
  for (const k of keys) if (!kept.has(k)) result.push(k);
  return result;
}

function numberText(value: number, raw: string | undefined): string {
  if (raw !== undefined && Object.is(Number(raw), value)) return raw;
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * True when JSON.stringify would write `value` exactly as the JS writer does: no container in
 * it has recorded number text or key order, no bigint, no toJSON. Deep or cyclic values answer
 * false and take the JS writer, which reports cycles clearly.
 */
export function nativeWriteIsExact(value: object): boolean {
  return nativeSafe(value, 0);
}

function nativeSafe(value: object, depth: number): boolean {
  if (depth > 64 || RAW_NUMBERS.has(value) || KEY_ORDER.has(value)) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!nativeSafeItem(value[i], depth)) return false;
    return true;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false; // its result is unknown here
  // for-in (fast, no allocation) also visits inherited enumerable keys: that only adds checks.
  for (const key in value) if (!nativeSafeItem((value as Record<string, unknown>)[key], depth)) return false;
  return true;
}

function nativeSafeItem(item: unknown, depth: number): boolean {
  if (typeof item === 'object') return item === null || nativeSafe(item, depth + 1);
  return typeof item !== 'bigint';
}

function writeValue(
  value: unknown,
  raws: Map<Slot, string> | undefined,
  slot: Slot,
  seen: Set<object>,
): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value); // escapes only ", \, controls and lone surrogates
    case 'number':
      return numberText(value, raws?.get(slot));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined; // undefined, function, symbol
  }
  if (value === null) return 'null';
  if (nativeSafe(value, 0)) {
    try {
      return JSON.stringify(value);
    } catch {
      // e.g. a throwing getter: the JS writer below meets it again and lets it surface
    }
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return writeValue(toJSON.call(value, String(slot)), undefined, slot, seen);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return writeValue(value.valueOf(), undefined, slot, seen);
  }
  if (Array.isArray(value)) return writeArray(value, seen);
  return stringifyObject(value as Record<string, unknown>, NO_SHAPE, seen);
}

function writeArray(arr: unknown[], seen: Set<object>): string {
  if (seen.has(arr)) throw new JsonCycleError('cannot encode a circular structure');
  seen.add(arr);
  const raws = RAW_NUMBERS.get(arr);
  let out = '[';
  for (let i = 0; i < arr.length; i++) {
    if (i > 0) out += ',';
    out += writeValue(arr[i], raws, i, seen) ?? 'null';
  }
  seen.delete(arr);
  return out + ']';
}
