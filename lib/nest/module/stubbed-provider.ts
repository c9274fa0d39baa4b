/**
 * A provider of the module may be replaced in a test (`overrideProvider(X).useValue({ publish: jest.fn() })`):
 * the module's own wiring then meets a plain object where it expects its class, and must neither crash nor
 * make `app.close()` fail. These helpers call a method only where the value has it.
 */

/** Calls `value.close()` when there is one; resolves either way. */
export async function closeIfClosable(value: unknown): Promise<void> {
  const close = (value as { close?: unknown } | null | undefined)?.close;
  if (typeof close === 'function') await (close as () => unknown).call(value);
}

/** Calls `value[method]()` when it is a function, else returns `fallback`. */
export function callIfPresent<T>(value: unknown, method: string, fallback: T): T {
  const fn = (value as Record<string, unknown> | null | undefined)?.[method];
  return typeof fn === 'function' ? ((fn as () => T).call(value) ?? fallback) : fallback;
}
