import { KEY_ORDER, RAW_NUMBERS, type Slot } from './raw-numbers.js';

// The serializer matching the parser of json.ts: JSON.stringify semantics (toJSON, undefined/function/symbol
// skipped in objects and null in arrays, non-finite → null), plus recorded number text, recorded key order,
// bigint as its digits, and a clear error on cycles.

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
