// Carrying out a settlement: write the replacement (retry copy or dead-letter record), then acknowledge the
// original; a write that fails leaves the original negatively acknowledged, so nothing is lost.
import type { PulsarMessage, PulsarProducer, PulsarProducerMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import type { OutboundCopy, Settlement } from './decision-types.js';
import { asError, type DeadLetterWrite } from './hooks.js';
import { bareRecord, bodyOmittedRecord, isTooBig } from './oversize.js';
import { unreachable } from './diagnostics.js';
import { escapeControls } from '../text/untrusted-text.js';
import type { ProcessorContext, SettledEvent } from './processor-context.js';

/** What the hooks hear of a settlement, once its lines are logged. */
export interface CarriedOut {
  /** The dead-letter record written (onDeadLetter). */
  deadLetter: DeadLetterWrite | null;
  /** The retry copy or dead-letter record that could not be written (onError). */
  writeFailure: Error | null;
}

const NOTHING_TO_REPORT: CarriedOut = { deadLetter: null, writeFailure: null };

export async function carryOut(
  settlement: Settlement,
  message: PulsarMessage,
  ctx: ProcessorContext,
  event: SettledEvent,
): Promise<CarriedOut> {
  switch (settlement.action) {
    case 'ack':
      if (settlement.warning) ctx.logger.warn(escapeControls(settlement.warning));
      await acknowledge(message, ctx, event);
      return NOTHING_TO_REPORT;
    case 'drop':
      // Logged by the failure line (outcome dropped), which carries the same facts.
      await acknowledge(message, ctx, event);
      return NOTHING_TO_REPORT;
    case 'retry-in-place':
      // Nothing is written and nothing acknowledged: the message itself is the retry (see TopicConsumer).
      event.attempt = settlement.attempt;
      event.inPlace = true;
      event.retryDelayMs = settlement.delayMs;
      return NOTHING_TO_REPORT;
    case 'nack':
      event.reason = settlement.why;
      ctx.consumer.negativeAcknowledge(message);
      return NOTHING_TO_REPORT;
    case 'retry':
    case 'dead-letter': {
      const isRetry = settlement.action === 'retry';
      const producer = isRetry ? ctx.retryProducer! : ctx.deadLetterProducer!;
      if (isRetry) event.attempt = settlement.attempt;
      else event.reason = settlement.reason;
      let written: OutboundCopy;
      try {
        // The keys travel with the copy, so it lands on its original's partition and Key_Shared hands it to
        // the consumer that owns the key.
        written = isRetry
          ? await send(producer, settlement.copy, keysOf(message))
          : await writeDeadLetter(producer, settlement, message, ctx, event);
      } catch (error) {
        // Never acknowledge what was not replaced (docs/contract.md#settlement): the broker redelivers it.
        event.written = false;
        const where = isRetry ? 'retry copy to' : 'dead-letter record to';
        const failure = new Error(`could not write the ${where} ${producer.getTopic()}: ${asError(error).message}`, {
          cause: error,
        });
        // A write refused once is usually refused on every redelivery (a missing permission, a full disk):
        // reported at error level once per message and target, repeats at debug.
        const first = ctx.firstReport?.(`${producer.getTopic()} ${event.messageId}`) ?? true;
        const line = `${failure.message} (message ${event.messageId} on ${ctx.topic} was negatively acknowledged and stays on the broker until the write succeeds${first ? '; repeats for this message are logged at debug level' : ''})`;
        if (first) ctx.logger.error(line);
        else ctx.logger.debug?.(line);
        ctx.consumer.negativeAcknowledge(message);
        return { deadLetter: null, writeFailure: failure };
      }
      event.written = true;
      let deadLetter: DeadLetterWrite | null = null;
      if (settlement.action === 'dead-letter') {
        deadLetter = { reason: settlement.reason, topic: producer.getTopic(), ...written };
        event.deadLetterTopic = producer.getTopic();
      }
      await acknowledge(message, ctx, event);
      return { deadLetter, writeFailure: null };
    }
    default:
      return unreachable(settlement);
  }
}

async function send(
  producer: PulsarProducer,
  copy: OutboundCopy,
  keys: Pick<PulsarProducerMessage, 'partitionKey' | 'orderingKey'>,
): Promise<OutboundCopy> {
  // Without a retry policy the copy has no delivery time and is due at once; with one it carries the absolute
  // time (docs/contract.md#delays), honoured by the broker on Shared and Key_Shared subscriptions.
  await producer.send({
    data: copy.data,
    properties: copy.properties,
    ...(copy.deliverAt !== undefined && { deliverAt: copy.deliverAt }),
    ...keys,
  });
  return copy;
}

/**
 * Writes the dead-letter record. A record refused as too big is refused forever, so instead of looping
 * (negative acknowledgement, redelivery, refusal…) it is written without the body, then, if still too big,
 * as a bare record of properties; the original message id and size say where the body is.
 */
async function writeDeadLetter(
  producer: PulsarProducer,
  settlement: Extract<Settlement, { action: 'dead-letter' }>,
  message: PulsarMessage,
  ctx: ProcessorContext,
  event: SettledEvent,
): Promise<OutboundCopy> {
  const keys = keysOf(message);
  try {
    return await send(producer, settlement.record, keys);
  } catch (error) {
    if (!isTooBig(error)) throw error;
  }
  const original = { size: message.getData().length, messageId: messageIdText(message.getMessageId()) };
  const slim = bodyOmittedRecord(settlement.reason, settlement.record, original);
  let written: OutboundCopy;
  try {
    written = await send(producer, slim, keys);
  } catch (error) {
    if (!isTooBig(error)) throw error;
    written = await send(producer, bareRecord(slim), keys);
  }
  event.bodyOmitted = true;
  ctx.logger.warn(
    `dead-letter record for message ${original.messageId} on ${ctx.topic} (${settlement.reason}) was too big to ` +
      `write; written to ${producer.getTopic()} without its body (${original.size} bytes): read the original ` +
      'from the topic by that message id while retention keeps it',
  );
  return written;
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
