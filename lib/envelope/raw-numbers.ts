/**
 * The side tables of the exact JSON parser and serializer (json.ts, json-serializer.ts): the text of numbers
 * String() would not reproduce, and the received key order of objects with array-index keys.
 */

export type Container = object;
export type Slot = string | number;

/** container → (key or index → raw number text), only for numbers String() would not reproduce. */
export const RAW_NUMBERS = new WeakMap<Container, Map<Slot, string>>();
/**
 * object → key order as received, kept only for objects with array-index keys ("0", "12"),
 * which JS objects would otherwise move to the front.
 */
export const KEY_ORDER = new WeakMap<Container, string[]>();

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
