import { unreachable } from './diagnostics.js';
import { bareTopicName, deadLetterProperties, deadLetterRecord, EnvelopeCodec } from '../envelope/index.js';
import { BQ } from '../pulsar/binding.js';
import { retryDelayMs } from './retry-delay.js';
import type {
  InboundMessage,
  Inspection,
  Outcome,
  OutboundCopy,
  Settlement,
  SettlementPolicy,
} from './decision-types.js';
import { errorText } from '../envelope/error-text.js';
import { logicalTopicName, normalizeTopic } from '../pulsar/topic-name.js';

/**
 * The incoming properties without any `bq-dead-letter-*`: those of a record are this library's word on it, never
 * what a publisher set (a forged `bq-dead-letter-topic` would choose where a redrive writes).
 */
function withoutDeadLetterProperties(properties: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties)) if (!key.startsWith('bq-dead-letter-')) kept[key] = value;
  return kept;
}

/** The full name of the topic consumed (a partition counts as its topic); undefined when it is not one name. */
function consumedTopicOf(topic: string): string | undefined {
  try {
    return normalizeTopic(logicalTopicName(topic));
  } catch {
    return undefined;
  }
}

/**
 * Decides how a delivery is settled (pure): the rules of docs/contract.md (retries, dead-letter records, settlement).
 * `outcome` is ignored for gate-rejected and poison deliveries, which never reach a handler.
 */
export function decideSettlement(
  message: InboundMessage,
  inspection: Inspection,
  outcome: Outcome,
  policy: SettlementPolicy,
): Settlement {
  switch (inspection.kind) {
    case 'gate-rejected':
      return {
        action: 'ack',
        warning: `acknowledged without decoding: bq-schema-version ${JSON.stringify(inspection.received)} is not supported`,
      };
    case 'poison':
      return settlePoison(message, inspection, policy);
    case 'dispatch':
      if (outcome.kind === 'handled') return { action: 'ack' };
      if (outcome.kind === 'set-aside') return setAside(inspection.urn, outcome.strategy, message.redeliveryCount);
      return settleFailure(message, inspection, outcome, policy);
    default:
      return unreachable(inspection);
  }
}

/** The delivery being made now counts too: reconciled attempts + 1. */
export function countedAttempt(reconciledAttempts: number): number {
  return reconciledAttempts + 1;
}

function withAttemptsProperty(properties: Record<string, string>, attempt: number): Record<string, string> {
  return { ...properties, [BQ.attempts]: String(attempt) };
}

function settlePoison(
  message: InboundMessage,
  inspection: Extract<Inspection, { kind: 'poison' }>,
  policy: SettlementPolicy,
): Settlement {
  const attempt = countedAttempt(inspection.attempts);
  if (policy.deadLetter) {
    // A poison record: the original bytes, unchanged, with the reason carried in properties.
    const record: OutboundCopy = {
      data: message.payload,
      properties: {
        ...withoutDeadLetterProperties(message.properties),
        ...deadLetterProperties({
          reason: 'poison',
          error: inspection.reason,
          attempts: attempt,
          originalQueue: bareTopicName(message.topic),
          failedAt: policy.now,
          consumedTopic: consumedTopicOf(message.topic),
        }),
      },
    };
    return { action: 'dead-letter', record, reason: 'poison', attempt };
  }
  const why = `poison message (${inspection.reason})`;
  if (attempt < policy.maxAttempts) {
    // A poison body cannot be re-encoded, so the copy is its original bytes.
    return retry(message.payload, withAttemptsProperty(message.properties, attempt), attempt, policy, why);
  }
  return { action: 'drop', warning: exhausted(why, attempt, policy), attempt };
}

/** An unknown URN's `delete` (acknowledged, with a warning) or `release` (negatively acknowledged for another consumer). */
function setAside(urn: string, strategy: 'delete' | 'release', redeliveryCount: number): Settlement {
  return strategy === 'delete'
    ? { action: 'ack', warning: `no handler for ${urn}: acknowledged and deleted (unknownUrn 'delete')` }
    : { action: 'nack', why: `no handler for ${urn}: released for another consumer (release ${redeliveryCount + 1})` };
}

function settleFailure(
  message: InboundMessage,
  inspection: Extract<Inspection, { kind: 'dispatch' }>,
  outcome: Extract<Outcome, { kind: 'failed' }>,
  policy: SettlementPolicy,
): Settlement {
  const attempt = countedAttempt(inspection.attempts);
  const why = `${outcome.reason === 'unknown_urn' ? 'unknown URN' : 'handler failed'} for ${inspection.urn}: ${errorText(outcome.error)}`;
  const nonRetriable = outcome.retriable === false;
  if (attempt < policy.maxAttempts && !nonRetriable) {
    const body = EnvelopeCodec.encodeToBuffer(EnvelopeCodec.withAttempts(inspection.envelope, attempt));
    return retry(body, withAttemptsProperty(message.properties, attempt), attempt, policy, why, outcome.delayMs);
  }
  // In place, a release would let the key's later messages overtake this one: the lane keeps its own order instead.
  if (policy.holdLastAttempt === true && !nonRetriable && policy.retryBy !== 'in-place')
    return {
      action: 'nack',
      why: `${why}; attempt ${attempt} of ${policy.maxAttempts} released, not dead-lettered: the circuit breaker is open`,
    };
  if (!policy.deadLetter) {
    const warning = nonRetriable
      ? `${why}; not retriable (attempt ${attempt} of ${policy.maxAttempts}) and no dead-letter destination: acknowledged and dropped`
      : exhausted(why, attempt, policy);
    return { action: 'drop', warning, attempt };
  }
  const failedAt = policy.now;
  const originalQueue = bareTopicName(message.topic);
  const record = deadLetterRecord(inspection.envelope, {
    reason: outcome.reason,
    error: outcome.error,
    attempts: attempt,
    originalQueue,
    failedAt,
  });
  return {
    action: 'dead-letter',
    reason: outcome.reason,
    attempt,
    ...(nonRetriable && { nonRetriable }),
    record: {
      data: EnvelopeCodec.encodeToBuffer(record),
      properties: {
        ...withAttemptsProperty(withoutDeadLetterProperties(message.properties), attempt),
        ...deadLetterProperties({
          reason: outcome.reason,
          error: outcome.error,
          attempts: attempt,
          originalQueue,
          failedAt,
          consumedTopic: consumedTopicOf(message.topic),
        }),
      },
    },
  };
}

function retry(
  data: Buffer,
  properties: Record<string, string>,
  attempt: number,
  policy: SettlementPolicy,
  why: string,
  ownDelayMs?: number,
): Settlement {
  if (policy.retryBy === 'nack')
    return { action: 'nack', why: `${why}; retry ${attempt} of ${policy.maxAttempts - 1}` };
  // Retry n follows the n-th counted attempt; a delay the handler asked for replaces the policy's for this copy.
  const delayMs = ownDelayMs ?? retryDelayMs(policy.retryPolicy, attempt, policy.jitterSample);
  if (policy.retryBy === 'in-place') return { action: 'retry-in-place', attempt, delayMs: Math.max(0, delayMs) };
  if (delayMs <= 0) return { action: 'retry', copy: { data, properties }, attempt, delayMs: 0 };
  // A delayed publish (docs/contract.md#delays) sets the absolute delivery time and mirrors the delay in bq-delay.
  const delayed = { ...properties, [BQ.delay]: String(delayMs) };
  return { action: 'retry', copy: { data, properties: delayed, deliverAt: policy.now + delayMs }, attempt, delayMs };
}

function exhausted(why: string, attempt: number, policy: SettlementPolicy): string {
  return `${why}; attempt ${attempt} of ${policy.maxAttempts} and no dead-letter destination: acknowledged and dropped`;
}
