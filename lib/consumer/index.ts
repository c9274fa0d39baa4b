export type {
  InboundMessage,
  Inspection,
  Outcome,
  OutboundCopy,
  Settlement,
  SettlementPolicy,
} from './decision-types.js';
export { inspect } from './inspect.js';
export { decideSettlement, countedAttempt } from './settle.js';
export type { BabelQueueHooks, ConsumerLogger, DeadLetterWrite } from './hooks.js';
export { processMessage } from './process-message.js';
export { isRetriableByDefault } from './processor-context.js';
export type {
  ProcessorContext,
  ReplySender,
  Resolution,
  ResolvedHandler,
  SettledEvent,
  SubscriptionPolicy,
} from './processor-context.js';
export { TopicConsumer } from './topic-consumer.js';
export type { TopicConsumerOptions } from './topic-consumer.js';
export { HandlerTimeoutError, withHandlerTimeout } from './handler-timeout.js';
export { BODY_OMITTED_PROPERTIES, isTooBig } from './oversize.js';
export { checkRetryPolicy, DEFAULT_MAX_RETRY_DELAY_MS, retryDelayMs } from './retry-delay.js';
export type { RetryPolicy } from './retry-delay.js';
export { deadLetterLine, failureLine } from './diagnostics.js';
export type { DeadLetterFacts, FailureFacts, FailureOutcome } from './diagnostics.js';
export { RetryRequestedError } from './settle-request.js';
export type { RetryRequestOptions, SettleRequest, SettleRequests } from './settle-request.js';
export { decideUnknownUrn, UNKNOWN_URN_STRATEGIES } from './unknown-urn.js';
export type { UnknownUrnPolicy, UnknownUrnStrategy } from './unknown-urn.js';
