import { claimTimes, type ClaimState, type ClaimStore, type ClaimTimes } from './claim-store.js';

/**
 * The one Redis command the claim store uses, as `ioredis` spells it (`new Redis(url)` fits as is). Every step is
 * a small Lua script, so a claim is one atomic round trip. node-redis:
 * `{ eval: (script, n, ...a) => c.eval(script, { keys: a.slice(0, n), arguments: a.slice(n) }) }`.
 */
export interface RedisScriptCommands {
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
}

export interface RedisClaimStoreOptions extends ClaimTimes {
  client: RedisScriptCommands;
  /** Key prefix. Default `babelqueue:claim:`. */
  prefix?: string;
}

// The key holds `held:<token>` for the lease, then `done` for the retention; SET NX makes the claim atomic.
const CLAIM = `if redis.call('SET', KEYS[1], 'held:' .. ARGV[1], 'PX', ARGV[2], 'NX') then return 'claimed' end
if redis.call('GET', KEYS[1]) == 'done' then return 'done' end
return 'held'`;
const COMMIT = `redis.call('SET', KEYS[1], 'done', 'PX', ARGV[1]) return 1`;
const RELEASE = `if redis.call('GET', KEYS[1]) == 'held:' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Claims in Redis, shared by every instance; a claim is a key expiring with its lease. */
export class RedisClaimStore implements ClaimStore {
  readonly leaseMs: number;
  private readonly doneTtlMs: number;
  private readonly client: RedisScriptCommands;
  private readonly prefix: string;

  constructor(options: RedisClaimStoreOptions) {
    if (typeof options?.client?.eval !== 'function')
      throw new TypeError('RedisClaimStore needs { client } with eval (e.g. new Redis() from ioredis)');
    ({ leaseMs: this.leaseMs, doneTtlMs: this.doneTtlMs } = claimTimes(options, 'RedisClaimStore'));
    this.client = options.client;
    this.prefix = options.prefix ?? 'babelqueue:claim:';
  }

  async claim(id: string, token: string): Promise<ClaimState> {
    const state = await this.client.eval(CLAIM, 1, this.prefix + id, token, String(this.leaseMs));
    if (state === 'claimed' || state === 'held' || state === 'done') return state;
    throw new Error(`RedisClaimStore: unexpected answer to a claim: ${String(state)}`);
  }

  async commit(id: string, _token?: string): Promise<void> {
    await this.client.eval(COMMIT, 1, this.prefix + id, String(this.doneTtlMs));
  }

  async release(id: string, token: string): Promise<void> {
    await this.client.eval(RELEASE, 1, this.prefix + id, token);
  }
}
