// Public API of @babelqueue/nestjs-pulsar: what an application writes. The pieces for tools and advanced uses have
// their own entry points: /testing (the in-memory kit), /envelope (the wire format), /pulsar (the clients and the
// Pulsar binding), /consumer (the settlement logic), /redrive, /replay, /outbox, /schema, /idempotency and
// /dashboard.
// api/*.api.md records each entry point's surface; CI fails when it changes without the report.

// The module, the transport and the decorator.
export {
  BabelQueueModule,
  BabelHandler,
  BabelContext,
  BabelBatchContext,
  BabelPulsarServer,
  BabelPulsarClient,
  BabelProducerPool,
  BabelQueueHealthIndicator,
  BabelQueueOptionsError,
  PublishError,
  BABEL_PULSAR_CLIENT,
  InjectBabelClient,
  getBabelClientToken,
  getBabelServerToken,
  getPulsarClientToken,
  getBabelProducerPoolToken,
  getBabelHealthIndicatorToken,
  getBabelRedriveToken,
  getBabelOutboxToken,
} from './nest/index.js';
export type {
  BabelQueueModuleOptions,
  BabelQueueConsumerOptions,
  BabelQueueModuleRootOptions,
  BabelQueueModuleAsyncOptions,
  BabelQueueOptionsFactory,
  BabelQueueHooksOption,
  BabelHandlerOptions,
  BatchOptions,
  BabelPulsarServerOptions,
  BabelPulsarClientOptions,
  PublishOptions,
  BabelServerStatus,
  BabelQueueHealthResult,
} from './nest/index.js';

// Settlement: hooks, events, retries, and the errors a handler throws or a hook receives.
export type { BabelQueueHooks, ConsumerLogger, DeadLetterWrite, RetryPolicy, SettledEvent } from './consumer/index.js';
export { HandlerTimeoutError } from './consumer/index.js';
export {
  BabelQueueError,
  BabelNonRetriableError,
  InvalidEnvelopeError,
  SchemaVersionRejectedError,
  UnknownUrnError,
  EnvelopeCodec,
} from './envelope/index.js';
export type { Envelope } from './envelope/index.js';

// Clients.
export { PulsarWebSocketClient } from './pulsar/websocket/index.js';
export type { PulsarClientLike, PulsarMessage, SubscriptionType } from './pulsar/client-types.js';
export type { PulsarConsumerOptions, PulsarProducerOptions } from './pulsar/client-options.js';
export type { PulsarAuthOptions } from './pulsar/client-factory.js';
export type { TelemetryOption } from './otel/telemetry-options.js';

// Handling a message once, typed URNs and payload schemas, the outbox, redrive and the dashboard.
export { Idempotent, InMemoryIdempotencyStore, RedisIdempotencyStore } from './idempotency/index.js';
export type { IdempotencyStore } from './idempotency/index.js';
export { defineUrn, AesGcmCipher, InvalidPayloadError } from './schema/index.js';
export type { PayloadOf, PayloadSchema } from './schema/index.js';
export { BabelOutbox, OutboxRelay, outboxMigrationSql } from './outbox/index.js';
export { BabelQueueRedrive } from './redrive/index.js';
export { BabelQueueDashboardModule } from './dashboard/index.js';
export type { BabelQueueDashboardOptions } from './dashboard/index.js';
