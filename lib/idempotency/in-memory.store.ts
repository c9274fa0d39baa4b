import { describeValue } from '../describe-value.js';
import type { IdempotencyStore } from './store.js';

export interface InMemoryIdempotencyStoreOptions {
  /** Most ids kept; the oldest go first. Default 10000. */
  maxEntries?: number;
  /** How long an id is remembered, ms. Default 24 h. */
  ttlMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * Ids in this process's memory: bounded and expiring. A duplicate that reaches another instance (Shared
 * subscription) or arrives after a restart is not caught: use RedisIdempotencyStore for those.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  // Insertion order = age order, so the first key is the one to evict.
  private readonly expiries = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
    this.now = options.now ?? Date.now;
    if (!(Number.isInteger(this.maxEntries) && this.maxEntries > 0))
      throw new TypeError(`maxEntries must be a positive whole number, got ${describeValue(options.maxEntries)}`);
    if (!(Number.isFinite(this.ttlMs) && this.ttlMs > 0))
      throw new TypeError(`ttlMs must be a positive number of ms, got ${describeValue(options.ttlMs)}`);
  }

  get size(): number {
    return this.expiries.size;
  }

  seen(id: string): boolean {
    const expiry = this.expiries.get(id);
    if (expiry === undefined) return false;
    if (expiry > this.now()) return true;
    this.expiries.delete(id);
    return false;
  }

  remember(id: string): void {
    this.expiries.delete(id); // re-inserted as the newest
    this.expiries.set(id, this.now() + this.ttlMs);
    this.evict();
  }

  forget(id: string): void {
    this.expiries.delete(id);
  }

  private evict(): void {
    const now = this.now();
    for (const [id, expiry] of this.expiries) {
      if (this.expiries.size <= this.maxEntries && expiry > now) break;
      this.expiries.delete(id);
    }
  }
}
