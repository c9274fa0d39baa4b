export { BABEL_PULSAR_CLIENT, BABEL_TRANSPORT } from './constants.js';
export { BabelHandler } from './handler/babel-handler.decorator.js';
export type { BabelHandlerOptions } from './handler/babel-handler.decorator.js';
export { BabelContext } from './context/babel.context.js';
export { BabelBatchContext } from './context/babel-batch.context.js';
export type { BatchOptions } from '../consumer/batch-collector.js';
export { BabelPulsarServer } from './server/babel-pulsar.server.js';
export type { BabelServerEvents, BabelServerStatus } from './server/babel-pulsar.server.js';
export type { SubscriptionTarget } from './server/pause-control.js';
export type { RetriableRule } from './options/retriable-rule.js';
export type { BabelPulsarServerOptions, ProducerSource } from './server/server-options.js';
export type { HandlerSettings, HandlerSettingsMap } from './options/handler-settings.js';
export { BabelPulsarClient } from './client/babel-pulsar.client.js';
export type {
  BabelClientEvents,
  BabelClientStatus,
  BabelPulsarClientOptions,
  PublishOptions,
  RequestOptions,
} from './client/babel-pulsar.client.js';
export type { ReplyInboxStats } from './client/reply-inbox.js';
export { mayHaveBeenStored, PublishError } from './client/publish-error.js';
export { BabelProducerPool } from './client/producer-pool.js';
export type { PooledProducerState } from './client/producer-pool.js';
export { BabelQueueModule } from './module/babel-queue.module.js';
export { BABEL_QUEUE_OPTIONS } from './module/module-definition.js';
export type {
  BabelQueueModuleAsyncOptions,
  BabelQueueModuleExtras,
  BabelQueueModuleRootOptions,
} from './module/module-definition.js';
export { BabelQueueOptionsError } from './module/options-error.js';
export type {
  BabelQueueConsumerOptions,
  BabelQueueModuleOptions,
  BabelQueueOptionsFactory,
} from './module/module-options.js';
export type { BabelQueueHooksOption } from './module/hooks-option.js';
export type { BabelQueueOutboxOptions } from './module/outbox-option.js';
export { BabelQueueHealthIndicator } from './module/health.indicator.js';
export type { BabelQueueHealthDetails, BabelQueueHealthResult } from './module/health.indicator.js';
export { ProducerNotAuthorizedError } from './server/refused-producer.js';
export type { ProducerPurpose, RefusedProducerState } from './server/refused-producer.js';
export type { SubscriptionState } from './server/subscription-set.js';
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
} from './module/registration-tokens.js';
