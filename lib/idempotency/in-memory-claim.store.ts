import { describeValue } from '../describe-value.js';
import { claimTimes, type ClaimState, type ClaimStore, type ClaimTimes } from './claim-store.js';

export interface InMemoryClaimStoreOptions extends ClaimTimes {
  /** Most committed ids kept; the oldest go first. Default 10000. */
  maxEntries?: number;
  /** Clock, for tests. */
  now?: () => number;
}

interface Entry {
  /** The holder's token; undefined once done. */
  token: string | undefined;
  expiresAt: number;
}

/**
 * Claims in this process's memory: two copies delivered to this instance at once run one after the other, not
 * together. Copies that reach another instance are not seen: use PostgresClaimStore or RedisClaimStore for those.
 * Expired entries are dropped as they are met and on each commit.
 */
export class InMemoryClaimStore implements ClaimStore {
  readonly leaseMs: number;
  private readonly doneTtlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: InMemoryClaimStoreOptions = {}) {
    ({ leaseMs: this.leaseMs, doneTtlMs: this.doneTtlMs } = claimTimes(options, 'InMemoryClaimStore'));
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 10_000;
    if (!(Number.isInteger(this.maxEntries) && this.maxEntries > 0))
      throw new TypeError(`maxEntries must be a positive whole number, got ${describeValue(options.maxEntries)}`);
  }

  get size(): number {
    return this.entries.size;
  }

  claim(id: string, token: string): ClaimState {
    const entry = this.entries.get(id);
    if (entry && entry.expiresAt > this.now()) return entry.token === undefined ? 'done' : 'held';
    this.entries.set(id, { token, expiresAt: this.now() + this.leaseMs });
    return 'claimed';
  }

  commit(id: string, _token?: string): void {
    this.entries.delete(id); // re-inserted as the newest, so the oldest entries come first for the sweep
    this.entries.set(id, { token: undefined, expiresAt: this.now() + this.doneTtlMs });
    this.sweep();
  }

  release(id: string, token: string): void {
    if (this.entries.get(id)?.token === token) this.entries.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) {
      const over = this.entries.size > this.maxEntries && entry.token === undefined;
      if (entry.expiresAt <= now || over) {
        this.entries.delete(id);
        continue;
      }
      // Done entries come in commit order, so the first live one that may stay ends the sweep; a live claim (at
      // most one per handler running) is stepped over.
      if (entry.token === undefined) break;
    }
  }
}
