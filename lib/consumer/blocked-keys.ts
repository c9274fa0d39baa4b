import type { SettledEvent } from './processor-context.js';

interface Blocked<T> {
  message: T;
  /** Settles the message as it would have been without the block (dead-lettered, or dropped). */
  unblock(): Promise<SettledEvent>;
}

/**
 * Keys blocked by a message that failed for good under `onExhausted: 'block-key'` (docs/scale.md#per-key-order):
 * the message stays unacknowledged and its lane busy until an operator unblocks the key. At most one per key, since
 * a key's lane runs one message at a time.
 */
export class BlockedKeys<T> {
  private readonly byKey = new Map<string, Blocked<T>>();

  block(key: string, message: T, unblock: () => Promise<SettledEvent>): void {
    this.byKey.set(key, { message, unblock });
  }

  /** The blocked entry of `key`, no longer blocked; undefined when the key is not blocked. */
  take(key: string): Blocked<T> | undefined {
    const blocked = this.byKey.get(key);
    this.byKey.delete(key);
    return blocked;
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The blocked keys, in the order they were blocked. */
  keys(): string[] {
    return [...this.byKey.keys()];
  }

  /** Forgets them all (on stop: the messages are left unacknowledged, for redelivery). */
  clear(): void {
    this.byKey.clear();
  }
}
