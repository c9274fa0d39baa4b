import { raiseStandardError, type RaiseOptionError } from '../options/option-table.js';
import { isClaimStore, type ClaimStore } from './claim-store.js';

/**
 * Where handled message ids (`meta.id`) are remembered (docs/contract.md#idempotency). Methods may be sync or async.
 * `seen` is asked before the handler runs, `remember` only after it succeeded, `forget` lets an id run again.
 */
export interface IdempotencyStore {
  seen(id: string): boolean | Promise<boolean>;
  remember(id: string): void | Promise<void>;
  forget(id: string): void | Promise<void>;
}

/**
 * `idempotency: { store }` on the module (every handler) or on one @BabelHandler / @Idempotent. A ClaimStore also
 * locks: two copies delivered at the same moment run one after the other, the second one skipped.
 */
export interface IdempotencyOptions {
  store: IdempotencyStore | ClaimStore;
}

export function checkIdempotencyOptions(
  options: unknown,
  name: string,
  raise: RaiseOptionError = raiseStandardError,
): asserts options is IdempotencyOptions {
  const store = (options as { store?: Partial<IdempotencyStore> } | null)?.store;
  if (isClaimStore(store)) return;
  if (
    !store ||
    typeof store.seen !== 'function' ||
    typeof store.remember !== 'function' ||
    typeof store.forget !== 'function'
  ) {
    raise(
      `${name} must be { store } with seen, remember and forget (e.g. new InMemoryIdempotencyStore()), or with ` +
        'leaseMs, claim, commit and release (e.g. new InMemoryClaimStore())',
      'type',
    );
  }
}
