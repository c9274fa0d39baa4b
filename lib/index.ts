// Public API of @babelqueue/nestjs-pulsar.
export * from './envelope/index.js';
export * from './pulsar/binding.js';
export * from './pulsar/partition.js';
export type * from './pulsar/client-types.js';
export type {
  ProducerOptionsSettings,
  PulsarConsumerOptions,
  PulsarKeySharedPolicy,
  PulsarProducerOptions,
} from './pulsar/client-options.js';
export * from './pulsar/websocket/index.js';
export * from './consumer/index.js';
export * from './nest/index.js';
export * from './redrive/index.js';
export * from './idempotency/index.js';
export type { TelemetryOption, TelemetryOptions } from './otel/telemetry-options.js';
export * from './dashboard/index.js';
export * from './outbox/index.js';
export * from './schema/index.js';
