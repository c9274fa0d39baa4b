// @babelqueue/nestjs-pulsar/pulsar: the Pulsar side. The client interface the library uses, the built-in
// WebSocket client, the client factory, the `bq-*` property binding and partitioned-topic names.
export * from './websocket/index.js';
export type * from './client-types.js';
export * from './binding.js';
// Request/response on the binding (docs/contract.md#requests-and-replies): a request or a reply made by hand.
export * from './reply-binding.js';
export { logicalTopicName, partitionOf, partitionTopicName } from './topic-name.js';
export { clientKindFor, createPulsarClient } from './client-factory.js';
export { LazyPulsarClient } from './lazy-client.js';
export type {
  CreateClientDependencies,
  PulsarAuthOptions,
  PulsarClientKind,
  PulsarClientSettings,
} from './client-factory.js';
export type {
  ProducerOptionsSettings,
  PulsarCompressionType,
  PulsarConsumerOptions,
  PulsarKeySharedPolicy,
  PulsarProducerAccessMode,
  PulsarProducerOptions,
  PulsarRoutingMode,
} from './client-options.js';
