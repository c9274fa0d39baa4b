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
