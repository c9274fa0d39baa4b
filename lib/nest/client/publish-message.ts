// One publish's message, built and checked before anything is sent: the envelope, its bq-* properties, the
// caller's headers and trace, the delay and the keys.
import { BabelQueueError, EnvelopeCodec, bareTopicName } from '../../envelope/index.js';
import { errorText } from '../../envelope/error-text.js';
import { isMessageData as isData, lossyDataProblem, urnProblem } from '../../envelope/producer-checks.js';
import type { PublishTrace } from '../../otel/tracing.js';
import { BQ, isBlankProperty, pulsarProperties } from '../../pulsar/binding.js';
import type { PulsarProducerMessage } from '../../pulsar/client-types.js';
import type { PayloadSchema } from '../../schema/payload-schema.js';
import { checkTopic, describe } from './client-options.js';

export interface PublishOptions {
  /** Topic to publish to; defaults to the client's topic. `meta.queue` is its bare name. */
  topic?: string;
  /**
   * Continue this trace (`trace_id` and `bq-trace-id`); the publish span is placed in it too (linked to the active
   * span, if any), so `traceparent` names the same trace. When absent or blank: the active OpenTelemetry span's
   * trace id as a UUID if a span is active (and tracing is on), else a new UUID.
   */
  traceId?: string;
  /**
   * The envelope's `meta.id` (and `bq-message-id`); a new UUID when absent. Pass the `messageId` of a
   * PublishError to retry a publish that may have been stored, so consumers can deduplicate by id.
   */
  id?: string;
  /** Delivery delay in ms: native delivery at now + delay and `bq-delay`. 0 or absent: no delay. */
  delay?: number;
  /**
   * Partition key: on a partitioned topic it picks the partition (the same one whichever client publishes),
   * on Key_Shared the consumer; messages of one key keep their order. Retry copies and dead-letter records keep it.
   */
  key?: string;
  /** Key_Shared routes on this instead of `key` (which still picks the partition). Native client only. */
  orderingKey?: string;
  /** Extra Pulsar properties (e.g. `traceparent`). Blank keys or values are dropped; the `bq-*` properties win. */
  headers?: Record<string, string | undefined>;
  /** How long this publish waits for the broker; default the client's `publishTimeoutMs` (10000 ms). */
  timeoutMs?: number;
  /**
   * Validate `data` against this JSON Schema before sending (InvalidPayloadError, nothing sent) and encrypt its
   * `x-gdpr-sensitive` fields. Default: the contract's schema when publishing through a contract (defineUrn).
   */
  schema?: PayloadSchema;
}

/** The topic, message and `meta.id` of one publish; throws a BabelQueueError, nothing sent, on bad input. */
export function preparePublish(
  defaultTopic: string | undefined,
  urn: unknown,
  data: unknown,
  options: PublishOptions,
  trace?: PublishTrace,
): { topic: string; message: PulsarProducerMessage; id: string } {
  if (typeof urn !== 'string' || urn.trim() === '') {
    throw new BabelQueueError(`publish needs a non-blank URN (e.g. "urn:babel:orders:created"), got ${describe(urn)}`);
  }
  if (!isData(data)) {
    throw new BabelQueueError(`publish data must be a plain object (use {} for no data), got ${describe(data)}`);
  }
  const refused = urnProblem(urn) ?? lossyDataProblem(data);
  if (refused) throw new BabelQueueError(`publish refused, nothing sent: ${refused}`);
  if (options === null || typeof options !== 'object') throw new BabelQueueError('publish options must be an object');
  const topic = options.topic === undefined ? defaultTopic : checkTopic(options.topic, 'options.topic');
  if (topic === undefined) {
    throw new BabelQueueError('publish needs a topic: pass { topic } or configure a default topic on the client');
  }
  if (options.traceId !== undefined && typeof options.traceId !== 'string') {
    throw new BabelQueueError(`options.traceId must be a string, got ${describe(options.traceId)}`);
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id.trim() === '')) {
    throw new BabelQueueError(`options.id must be a non-blank string, got ${describe(options.id)}`);
  }
  const delay = checkDelay(options.delay);
  for (const name of ['key', 'orderingKey'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'string') {
      throw new BabelQueueError(`options.${name} must be a string, got ${describe(options[name])}`);
    }
  }
  const headers = checkHeaders(options.headers);

  // Under an active span and without a trace id of its own, the envelope continues the span's trace (as the
  // other SDKs' OTel publish does), so consumers that ignore traceparent still land in the same trace.
  const traceId = options.traceId !== undefined && options.traceId.trim() !== '' ? options.traceId : trace?.traceId;
  const envelope = EnvelopeCodec.make(urn, data, {
    queue: bareTopicName(topic),
    ...(traceId !== undefined && { traceId }),
    ...(options.id !== undefined && { id: options.id }),
  });
  let payload: Buffer;
  try {
    payload = EnvelopeCodec.encodeToBuffer(envelope);
  } catch (error) {
    if (error instanceof BabelQueueError) throw error;
    throw new BabelQueueError(`publish data cannot be encoded as JSON: ${errorText(error)}`, {
      cause: error,
    });
  }
  // traceparent / tracestate ride as transport properties, never in the envelope; the caller's headers win.
  const properties: Record<string, string> = { ...trace?.headers, ...headers, ...pulsarProperties(envelope) };
  const message: PulsarProducerMessage = { data: payload, properties };
  if (delay > 0) {
    properties[BQ.delay] = String(delay);
    message.deliverAt = Date.now() + delay;
  }
  if (options.key) message.partitionKey = options.key;
  if (options.orderingKey) message.orderingKey = options.orderingKey;
  return { topic, message, id: envelope.meta.id };
}

/** Whole milliseconds, rounded up so that any positive delay delays. */
function checkDelay(delay: unknown): number {
  if (delay === undefined) return 0;
  if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
    throw new BabelQueueError(`options.delay must be a finite number of milliseconds >= 0, got ${describe(delay)}`);
  }
  return Math.ceil(delay);
}

function checkHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new BabelQueueError(`options.headers must be an object of string values, got ${describe(headers)}`);
  }
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') {
      throw new BabelQueueError(
        `header ${JSON.stringify(key)} must be a string (Pulsar properties are strings), got ${describe(value)}`,
      );
    }
    // bq-delay mirrors the native delay (docs/contract.md#delays), so only the delay option sets it.
    if (isBlankProperty(key) || isBlankProperty(value) || key === BQ.delay) continue;
    Object.defineProperty(kept, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return kept;
}
