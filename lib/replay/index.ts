export { BabelQueueReplay } from './babel-queue-replay.js';
export { replaySubscription } from './subscription-replay.js';
export { SubscriptionReplayError } from './errors.js';
export type { ReplayFailureKind } from './errors.js';
export type { AdminConnection } from './admin-calls.js';
export type { SubscriptionReplayOptions, SubscriptionReplayResult } from './subscription-replay.js';
