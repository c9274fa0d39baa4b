export { BABEL_PULSAR_CLIENT, BABEL_TRANSPORT } from './constants.js';
export { BabelHandler } from './babel-handler.decorator.js';
export type { BabelHandlerOptions } from './babel-handler.decorator.js';
export { BabelContext } from './babel.context.js';
export { BabelBatchContext } from './babel-batch.context.js';
export type { BatchOptions } from '../consumer/batch-collector.js';
export { BabelPulsarServer } from './babel-pulsar.server.js';
export type { BabelServerEvents, BabelServerStatus } from './babel-pulsar.server.js';
export type { SubscriptionTarget } from './pause-control.js';
export type { RetriableRule } from './retriable-rule.js';
export type { BabelPulsarServerOptions, ProducerSource } from './server-options.js';
export { BabelPulsarClient } from './babel-pulsar.client.js';
export type {
  BabelClientEvents,
  BabelClientStatus,
  BabelPulsarClientOptions,
  PublishOptions,
} from './babel-pulsar.client.js';
export { mayHaveBeenStored, PublishError } from './publish-error.js';
export { BabelProducerPool } from './producer-pool.js';
export type { PooledProducerState } from './producer-pool.js';
export { BabelQueueModule } from './babel-queue.module.js';
export { BABEL_QUEUE_OPTIONS } from './module-definition.js';
export type {
  BabelQueueModuleAsyncOptions,
  BabelQueueModuleExtras,
  BabelQueueModuleRootOptions,
} from './module-definition.js';
export { BabelQueueOptionsError } from './module-options.js';
export type {
  BabelQueueConsumerOptions,
  BabelQueueHooksOption,
  BabelQueueModuleOptions,
  BabelQueueOutboxOptions,
  BabelQueueOptionsFactory,
} from './module-options.js';
export { BabelQueueHealthIndicator } from './health.indicator.js';
export type { BabelQueueHealthDetails, BabelQueueHealthResult } from './health.indicator.js';
export { ProducerNotAuthorizedError } from './refused-producer.js';
export type { ProducerPurpose, RefusedProducerState } from './refused-producer.js';
export { clientKindFor, createPulsarClient } from '../pulsar/client-factory.js';
export type { PulsarAuthOptions, PulsarClientKind, PulsarClientSettings } from '../pulsar/client-factory.js';
export {
  getBabelClientToken,
  getBabelHealthIndicatorToken,
  getBabelOutboxRelayToken,
  getBabelOutboxToken,
  getBabelProducerPoolToken,
  getBabelRedriveToken,
  getBabelServerToken,
  getPulsarClientToken,
  InjectBabelClient,
} from './registration-tokens.js';
