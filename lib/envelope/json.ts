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
 *
 * The side tables are in raw-numbers.ts, the serializer in json-serializer.ts.
 */
import { KEY_ORDER, RAW_NUMBERS, type Slot } from './raw-numbers.js';
import { setOwn } from './set-own.js';

export { copyRawInfo, forgetRaw, moveRawSlot, rawNumberAt } from './raw-numbers.js';
export { setOwn } from './set-own.js';
export {
  JsonCycleError,
  nativeWriteIsExact,
  stringifyJson,
  stringifyObject,
  type ObjectShape,
} from './json-serializer.js';

/** Deeper input is refused with an error instead of risking a stack overflow. */
export const MAX_DEPTH = 512;

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
