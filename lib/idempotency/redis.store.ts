import { describeValue } from '../describe-value.js';
import type { IdempotencyStore } from './store.js';

/**
 * The few Redis commands the store uses, as `ioredis` spells them. The library never imports a Redis client: pass
 * your own (`new Redis(url)` from ioredis fits as is; node-redis needs a three-line adapter, see docs/idempotency.md).
 */
export interface RedisCommands {
  exists(key: string): Promise<number>;
  set(key: string, value: string, unit: 'PX', ttlMs: number): Promise<unknown>;
  del(key: string): Promise<number>;
}

export interface RedisIdempotencyStoreOptions {
  client: RedisCommands;
  /** Key prefix. Default `babelqueue:idempotency:`. */
  prefix?: string;
  /** How long an id is remembered, ms. Default 7 days. */
  ttlMs?: number;
}

/** Ids in Redis, shared by every instance and surviving restarts; each key expires after `ttlMs`. */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly client: RedisCommands;
  private readonly prefix: string;
  private readonly ttlMs: number;

  constructor(options: RedisIdempotencyStoreOptions) {
    if (!options?.client) throw new TypeError('RedisIdempotencyStore needs { client } (e.g. new Redis() from ioredis)');
    this.client = options.client;
    this.prefix = options.prefix ?? 'babelqueue:idempotency:';
    this.ttlMs = options.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
    if (!(Number.isInteger(this.ttlMs) && this.ttlMs > 0))
      throw new TypeError(`ttlMs must be a positive whole number of ms, got ${describeValue(options.ttlMs)}`);
  }

  async seen(id: string): Promise<boolean> {
    return (await this.client.exists(this.prefix + id)) > 0;
  }

  async remember(id: string): Promise<void> {
    await this.client.set(this.prefix + id, '1', 'PX', this.ttlMs);
  }

  async forget(id: string): Promise<void> {
    await this.client.del(this.prefix + id);
  }
}
