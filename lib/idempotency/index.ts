export { Idempotent, IdempotencyInterceptor } from '../nest/handler/idempotent.interceptor.js';
export { InMemoryIdempotencyStore, type InMemoryIdempotencyStoreOptions } from './in-memory.store.js';
export { RedisIdempotencyStore, type RedisCommands, type RedisIdempotencyStoreOptions } from './redis.store.js';
export { runOnce, type RunOnceOutcome } from './run-once.js';
export type { IdempotencyOptions, IdempotencyStore } from './store.js';
export { isClaimStore, type ClaimState, type ClaimStore, type ClaimTimes } from './claim-store.js';
export { InMemoryClaimStore, type InMemoryClaimStoreOptions } from './in-memory-claim.store.js';
export { RedisClaimStore, type RedisClaimStoreOptions, type RedisScriptCommands } from './redis-claim.store.js';
export {
  PostgresClaimStore,
  claimStoreMigrationSql,
  DEFAULT_CLAIM_TABLE,
  type PostgresClaimStoreOptions,
} from './postgres-claim.store.js';
export { runClaimed, ClaimHeldError, type RunClaimedOptions } from './run-claimed.js';
export type { SqlQueryable } from './sql-table.js';
