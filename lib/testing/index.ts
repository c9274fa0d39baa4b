// @babelqueue/nestjs-pulsar/testing: run an app's handlers, settlement and Nest pipeline with no broker.
export { InMemoryPulsar, TestClock } from './in-memory-pulsar.js';
export type { StoredMessage } from './in-memory-pulsar.js';
export { BabelQueueTestHarness } from './harness.js';
export type {
  MessageOutcome,
  ObservedMessage,
  OutcomeKind,
  PublishedTestMessage,
  PublishTestOptions,
  SettlingServer,
  TestHarnessOptions,
} from './harness.js';
export { useInMemoryPulsar } from './use-in-memory-pulsar.js';
export type { OverridableBuilder } from './use-in-memory-pulsar.js';
