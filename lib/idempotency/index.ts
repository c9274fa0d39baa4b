export { Idempotent, IdempotencyInterceptor } from '../nest/handler/idempotent.interceptor.js';
export { InMemoryIdempotencyStore, type InMemoryIdempotencyStoreOptions } from './in-memory.store.js';
export { RedisIdempotencyStore, type RedisCommands, type RedisIdempotencyStoreOptions } from './redis.store.js';
export { runOnce, type RunOnceOutcome } from './run-once.js';
export type { IdempotencyOptions, IdempotencyStore } from './store.js';
