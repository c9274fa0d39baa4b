import { raiseStandardError, type RaiseOptionError } from '../options/option-table.js';
/**
 * Where handled message ids (`meta.id`) are remembered (docs/contract.md#idempotency). Methods may be sync or async.
 * `seen` is asked before the handler runs, `remember` only after it succeeded, `forget` lets an id run again.
 */
export interface IdempotencyStore {
  seen(id: string): boolean | Promise<boolean>;
  remember(id: string): void | Promise<void>;
  forget(id: string): void | Promise<void>;
}

/** `idempotency: { store }` on the module (every handler) or on one @BabelHandler / @Idempotent. */
export interface IdempotencyOptions {
  store: IdempotencyStore;
}

export function checkIdempotencyOptions(
  options: unknown,
  name: string,
  raise: RaiseOptionError = raiseStandardError,
): asserts options is IdempotencyOptions {
  const store = (options as { store?: Partial<IdempotencyStore> } | null)?.store;
  if (
    !store ||
    typeof store.seen !== 'function' ||
    typeof store.remember !== 'function' ||
    typeof store.forget !== 'function'
  ) {
    raise(`${name} must be { store } with seen, remember and forget (e.g. new InMemoryIdempotencyStore())`, 'type');
  }
}
