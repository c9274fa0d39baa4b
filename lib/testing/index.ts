// @babelqueue/nestjs-pulsar/testing: run an app's handlers, settlement and Nest pipeline with no broker.
export { InMemoryPulsar } from './in-memory-pulsar.js';
export { TestClock } from './test-clock.js';
export type { StoredMessage } from './in-memory-message.js';
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
export { InMemoryInbox } from '../inbox/in-memory-inbox.js';
export type { InMemoryFollowUp, InMemoryInboxOptions } from '../inbox/in-memory-inbox.js';
