import { InvalidEnvelopeError, SchemaVersionRejectedError, UnknownUrnError } from '../envelope/index.js';
import type { Envelope } from '../envelope/index.js';
import type { PulsarConsumer, PulsarMessage, PulsarProducer, PulsarProducerMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import type { InboundMessage, Outcome, Settlement, SettlementPolicy } from './decision-types.js';
import { asError, callHookSafely, type BabelQueueHooks, type ConsumerLogger } from './hooks.js';
import { inspect } from './inspect.js';
import { decideSettlement } from './settle.js';

/** Runs the handler for a URN; rejects when the handler fails. */
export type Dispatcher = (urn: string, envelope: Envelope, message: PulsarMessage) => Promise<void>;

export interface ProcessorContext {
  topic: string;
  consumer: PulsarConsumer;
  retryProducer: PulsarProducer | null;
  deadLetterProducer: PulsarProducer | null;
  policy: Omit<SettlementPolicy, 'now' | 'deadLetter' | 'retryBy'>;
  hasHandler(urn: string): boolean;
  dispatch: Dispatcher;
  hooks: BabelQueueHooks;
  logger: ConsumerLogger;
  now?: () => number;
}

/** What happened to one delivery; emitted as the server's `settled` event. */
export interface SettledEvent {
  topic: string;
  messageId: string;
  urn: string | null;
  action: Settlement['action'] | 'ack-failed';
  reason?: string;
  attempt?: number;
  /** False when writing the replacement failed and the original was negatively acknowledged instead. */
  written?: boolean;
}

/**
 * The thin I/O layer around the pure decision functions: inspect, run the handler, decide, then
 * write the replacement (retry copy or dead-letter record) before acknowledging the original.
 */
export async function processMessage(message: PulsarMessage, ctx: ProcessorContext): Promise<SettledEvent> {
  const inbound: InboundMessage = {
    payload: message.getData(),
    properties: message.getProperties(),
    redeliveryCount: message.getRedeliveryCount(),
    topic: ctx.topic,
  };
  const inspection = inspect(inbound);
  const onError = (error: Error, envelope: Envelope | Record<string, never>) =>
    callHookSafely(ctx.logger, 'onError', () => ctx.hooks.onError?.(error, envelope, message));

  let outcome: Outcome = { kind: 'handled' };
  let urn: string | null = null;
  let envelope: Envelope | Record<string, never> = {};
  if (inspection.kind === 'gate-rejected') {
    onError(new SchemaVersionRejectedError(inspection.received), {});
  } else if (inspection.kind === 'poison') {
    onError(new InvalidEnvelopeError(`poison message on ${ctx.topic}: ${inspection.reason}`), {});
  } else {
    urn = inspection.urn;
    envelope = inspection.envelope;
    for (const warning of inspection.warnings) ctx.logger.warn(warning);
    const { mismatch } = inspection;
    if (mismatch) {
      callHookSafely(ctx.logger, 'onRoutingMismatch', () =>
        ctx.hooks.onRoutingMismatch?.(mismatch.propertyUrn, mismatch.bodyUrn, inspection.envelope, message),
      );
    }
    outcome = await runHandler(inspection.urn, inspection.envelope, message, ctx);
    if (outcome.kind === 'failed') onError(asError(outcome.error), inspection.envelope);
  }

  const settlement = decideSettlement(inbound, inspection, outcome, {
    ...ctx.policy,
    retryBy: ctx.retryProducer ? 'republish' : 'nack',
    deadLetter: ctx.deadLetterProducer !== null,
    now: ctx.now?.() ?? Date.now(),
  });
  const event: SettledEvent = {
    topic: ctx.topic,
    messageId: messageIdText(message.getMessageId()),
    urn,
    action: settlement.action,
  };
  await carryOut(settlement, message, envelope, ctx, event, onError);
  return event;
}

async function runHandler(
  urn: string,
  envelope: Envelope,
  message: PulsarMessage,
  ctx: ProcessorContext,
): Promise<Outcome> {
  if (!ctx.hasHandler(urn)) {
    if (!ctx.hooks.onUnknownUrn) return { kind: 'failed', reason: 'unknown_urn', error: new UnknownUrnError(urn) };
    try {
      await ctx.hooks.onUnknownUrn(envelope, message);
      return { kind: 'handled' };
    } catch (error) {
      return { kind: 'failed', reason: 'unknown_urn', error };
    }
  }
  try {
    await ctx.dispatch(urn, envelope, message);
    return { kind: 'handled' };
  } catch (error) {
    return { kind: 'failed', reason: 'failed', error };
  }
}

async function carryOut(
  settlement: Settlement,
  message: PulsarMessage,
  envelope: Envelope | Record<string, never>,
  ctx: ProcessorContext,
  event: SettledEvent,
  onError: (error: Error, envelope: Envelope | Record<string, never>) => void,
): Promise<void> {
  switch (settlement.action) {
    case 'ack':
      if (settlement.warning) ctx.logger.warn(settlement.warning);
      return acknowledge(message, ctx, event);
    case 'drop':
      ctx.logger.warn(settlement.warning);
      return acknowledge(message, ctx, event);
    case 'nack':
      event.reason = settlement.why;
      ctx.consumer.negativeAcknowledge(message);
      return;
    case 'retry':
    case 'dead-letter': {
      const isRetry = settlement.action === 'retry';
      const producer = isRetry ? ctx.retryProducer : ctx.deadLetterProducer;
      const copy = isRetry ? settlement.copy : settlement.record;
      if (isRetry) event.attempt = settlement.attempt;
      else event.reason = settlement.reason;
      try {
        // No delivery delay on the copy: a retry is due at once (Decision D3).
        // The keys travel with the copy, so it lands on its original's partition and Key_Shared hands it
        // to the consumer that owns the key.
        await producer!.send({ data: copy.data, properties: copy.properties, ...keysOf(message) });
      } catch (error) {
        // Decision D7: never acknowledge what was not replaced; the broker redelivers it.
        event.written = false;
        const where = isRetry ? 'retry copy to' : 'dead-letter record to';
        onError(
          new Error(`could not write the ${where} ${producer!.getTopic()}: ${asError(error).message}`, {
            cause: error,
          }),
          envelope,
        );
        ctx.consumer.negativeAcknowledge(message);
        return;
      }
      event.written = true;
      if (settlement.action === 'dead-letter') {
        const record = { reason: settlement.reason, topic: producer!.getTopic(), ...settlement.record };
        callHookSafely(ctx.logger, 'onDeadLetter', () => ctx.hooks.onDeadLetter?.(record, message));
      }
      return acknowledge(message, ctx, event);
    }
  }
}

/** The routing keys of a delivery, for its retry copy or dead-letter record (empty keys are left out). */
function keysOf(message: PulsarMessage): Pick<PulsarProducerMessage, 'partitionKey' | 'orderingKey'> {
  const partitionKey = message.getPartitionKey();
  const orderingKey = message.getOrderingKey?.() ?? '';
  return { ...(partitionKey && { partitionKey }), ...(orderingKey && { orderingKey }) };
}

async function acknowledge(message: PulsarMessage, ctx: ProcessorContext, event: SettledEvent): Promise<void> {
  try {
    await ctx.consumer.acknowledge(message);
  } catch (error) {
    // The broker redelivers an unacknowledged message, so this costs a duplicate, never a loss.
    event.action = 'ack-failed';
    ctx.logger.warn(`acknowledge failed on ${ctx.topic} (the message will be redelivered): ${asError(error).message}`);
  }
}
