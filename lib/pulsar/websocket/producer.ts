import type { PulsarProducer, PulsarProducerConfig, PulsarProducerMessage } from '../client-types.js';
import { PulsarWebSocketError } from './errors.js';
import { summarizeBrokerMessage } from './handshake.js';
import { PulsarWebSocketMessageId } from './message-id.js';
import { checkMs, type ResolvedOptions } from './options.js';
import { Connection } from './socket.js';
import type { TopicName } from '../topic-name.js';
import { addPassThroughQuery } from './wire-options.js';
import { WIRE_ROUTING_MODE } from '../client-options.js';

export interface PulsarWebSocketProducerMessage extends PulsarProducerMessage {
  /** Event time, epoch ms (sent as the frame's `eventTime`). */
  eventTimestamp?: number;
  sequenceId?: number;
}

/** Producer → broker frame (ProducerMessage). Note the relative delay is `deliverAfterMs` on the wire. */
interface ProducerFrame {
  payload: string;
  context: string;
  properties?: Record<string, string>;
  key?: string;
  deliverAt?: number;
  deliverAfterMs?: number;
  eventTime?: string;
  sequenceId?: number;
}

interface ProducerAck {
  result?: string;
  messageId?: string;
  context?: string;
  errorMsg?: string;
}

interface PendingSend {
  context: string;
  frame: string;
  resolve(id: PulsarWebSocketMessageId): void;
  reject(err: PulsarWebSocketError): void;
  timer: NodeJS.Timeout | undefined;
}

function invalidMessage(topic: string, why: string): PulsarWebSocketError {
  return new PulsarWebSocketError(`Invalid message for topic ${topic}: ${why}`, { code: 'InvalidArgument', topic });
}

function checkTime(topic: string, name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalidMessage(topic, `${name} must be a non-negative number of milliseconds, got ${String(value)}`);
  }
  return Math.round(value);
}

export function buildProducerFrame(
  topic: string,
  message: PulsarWebSocketProducerMessage,
  context: string,
): ProducerFrame {
  if (typeof message !== 'object' || message === null) throw invalidMessage(topic, 'expected an object with `data`');
  const { data } = message;
  // ArrayBuffer.isView rather than instanceof: Buffers from another realm (vm contexts, test runners) qualify too.
  if (!ArrayBuffer.isView(data)) throw invalidMessage(topic, '`data` must be a Buffer');
  const frame: ProducerFrame = {
    payload: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'),
    context,
  };
  if (message.properties !== undefined && message.properties !== null) {
    if (typeof message.properties !== 'object') throw invalidMessage(topic, '`properties` must be an object');
    const properties: Record<string, string> = {};
    for (const [key, value] of Object.entries(message.properties)) {
      if (typeof value !== 'string') throw invalidMessage(topic, `property ${JSON.stringify(key)} must be a string`);
      properties[key] = value;
    }
    if (Object.keys(properties).length > 0) frame.properties = properties;
  }
  if (message.partitionKey !== undefined && message.partitionKey !== null) {
    if (typeof message.partitionKey !== 'string') throw invalidMessage(topic, '`partitionKey` must be a string');
    if (message.partitionKey !== '') frame.key = message.partitionKey;
  }
  if (message.orderingKey !== undefined && message.orderingKey !== null && message.orderingKey !== '') {
    // Sending the message without it would silently change how Key_Shared routes it.
    throw invalidMessage(
      topic,
      'the WebSocket API cannot carry an ordering key; use partitionKey (Key_Shared routes on it too) or the native client',
    );
  }
  const deliverAt = checkTime(topic, 'deliverAt', message.deliverAt);
  if (deliverAt) frame.deliverAt = deliverAt;
  const deliverAfter = checkTime(topic, 'deliverAfter', message.deliverAfter);
  if (deliverAfter) frame.deliverAfterMs = deliverAfter;
  const eventTimestamp = checkTime(topic, 'eventTimestamp', message.eventTimestamp);
  if (eventTimestamp) frame.eventTime = new Date(eventTimestamp).toISOString();
  if (message.sequenceId !== undefined) {
    if (!Number.isSafeInteger(message.sequenceId) || message.sequenceId < 0) {
      throw invalidMessage(topic, '`sequenceId` must be a non-negative integer');
    }
    frame.sequenceId = message.sequenceId;
  }
  return frame;
}

/**
 * The producer URL's query parameters. Messages without a key are spread round robin over a partitioned topic's
 * partitions, as the native client's producers spread them: the broker's WebSocket producer would otherwise send
 * them all to one partition.
 */
export function buildProducerQuery(topic: string, config: PulsarProducerConfig): URLSearchParams {
  const query = new URLSearchParams();
  addPassThroughQuery('producer', topic, config, ['topic'], query);
  if (!query.has('messageRoutingMode')) query.set('messageRoutingMode', WIRE_ROUTING_MODE.RoundRobinDistribution);
  return query;
}

/**
 * A producer on one WebSocket. Sends are pipelined and matched to their acks by `context`.
 *
 * - While the socket is down (reconnecting), new sends wait in order and go out after the reconnect, each still
 *   bounded by sendTimeoutMs from the moment send() was called.
 * - Sends already written to a socket that then drops are rejected (ConnectionClosed): the broker may or may
 *   not have stored them, so they are never silently retried or dropped.
 */
export class PulsarWebSocketProducer implements PulsarProducer {
  private readonly connection: Connection;
  private readonly queued: PendingSend[] = [];
  private readonly inflight = new Map<string, PendingSend>();
  private readonly unsettled = new Set<Promise<unknown>>();
  private readonly sendTimeoutMs: number;
  private nextContext = 0;
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing: Promise<null> | undefined;

  /** @internal use PulsarWebSocketClient.createProducer */
  constructor(
    private readonly topic: TopicName,
    config: PulsarProducerConfig,
    private readonly options: ResolvedOptions,
    private readonly onClosed: (producer: PulsarWebSocketProducer) => void,
  ) {
    this.sendTimeoutMs = checkMs('sendTimeoutMs', config.sendTimeoutMs) ?? 30000;
    const query = buildProducerQuery(topic.full, config);
    const qs = query.toString();
    this.connection = new Connection(
      {
        urls: options.wsBases.map((base) => `${base}/ws/v2/producer/${topic.path}${qs ? `?${qs}` : ''}`),
        endpoints: options.endpoints,
        tls: options.tls,
        headers: options.headers,
        ...(options.ca !== undefined && { ca: options.ca }),
        timeoutMs: options.operationTimeoutMs,
        topic: topic.full,
        label: `producer for topic ${topic.full}`,
        reconnect: options.reconnect,
        keepAliveIntervalMs: options.keepAliveIntervalMs,
      },
      {
        onMessage: (text) => this.handleAck(text),
        onUp: () => this.drainQueue(),
        onDown: (error) => this.failInflight(error),
      },
    );
  }

  /** @internal */
  async connect(): Promise<void> {
    await this.connection.open();
  }

  getTopic(): string {
    return this.topic.full;
  }

  isConnected(): boolean {
    return this.state === 'open' && this.connection.isOpen();
  }

  send(message: PulsarWebSocketProducerMessage): Promise<PulsarWebSocketMessageId> {
    if (this.state !== 'open') return Promise.reject(this.closedError());
    let text: string;
    const context = String(++this.nextContext);
    try {
      text = JSON.stringify(buildProducerFrame(this.topic.full, message, context));
    } catch (err) {
      return Promise.reject(err);
    }
    const size = Buffer.byteLength(text);
    if (size > this.options.maxFrameBytes) {
      return Promise.reject(
        new PulsarWebSocketError(
          `Failed to send message to topic ${this.topic.full}: MessageTooBig (frame of ${size} bytes exceeds ` +
            `maxFrameBytes ${this.options.maxFrameBytes}; the payload is sent base64-encoded)`,
          { code: 'MessageTooBig', topic: this.topic.full },
        ),
      );
    }

    const promise = new Promise<PulsarWebSocketMessageId>((resolve, reject) => {
      const pending: PendingSend = { context, frame: text, resolve, reject, timer: undefined };
      if (this.sendTimeoutMs > 0) {
        pending.timer = setTimeout(() => this.timeout(pending), this.sendTimeoutMs);
        pending.timer.unref();
      }
      if (this.connection.isOpen() && this.queued.length === 0) this.transmit(pending);
      else this.queued.push(pending);
    });
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.unsettled.add(settled);
    void settled.then(() => this.unsettled.delete(settled));
    return promise;
  }

  /** Resolves once every send issued before this call has settled (acked, failed or timed out). */
  async flush(): Promise<null> {
    if (this.state === 'closed') throw this.closedError();
    await Promise.allSettled([...this.unsettled]);
    return null;
  }

  /**
   * Stops accepting sends, waits (at most operationTimeoutMs) for the acks of sends already written, then closes
   * the socket. Sends still waiting for a reconnect are rejected. Idempotent.
   */
  close(): Promise<null> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<null> {
    this.state = 'closing';
    if (!this.connection.isOpen()) this.rejectQueued();
    if (this.unsettled.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.unsettled]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, this.options.operationTimeoutMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
    this.state = 'closed';
    await this.connection.close();
    this.rejectQueued();
    for (const pending of [...this.inflight.values()]) this.settle(pending, this.closedError());
    this.onClosed(this);
    return null;
  }

  private closedError(): PulsarWebSocketError {
    return new PulsarWebSocketError(`Producer for topic ${this.topic.full} is closed (AlreadyClosed)`, {
      code: 'AlreadyClosed',
      topic: this.topic.full,
    });
  }

  private rejectQueued(): void {
    for (const pending of this.queued.splice(0)) {
      this.settle(
        pending,
        new PulsarWebSocketError(
          `Failed to send message to topic ${this.topic.full}: the producer was closed while disconnected, ` +
            `before the message could be sent`,
          { code: 'AlreadyClosed', topic: this.topic.full, cause: this.connection.lastError },
        ),
      );
    }
  }

  private transmit(pending: PendingSend): void {
    this.inflight.set(pending.context, pending);
    if (!this.connection.send(pending.frame)) {
      this.inflight.delete(pending.context);
      this.queued.unshift(pending);
    }
  }

  private drainQueue(): void {
    while (this.queued.length > 0 && this.connection.isOpen()) this.transmit(this.queued.shift()!);
  }

  private settle(pending: PendingSend, outcome: PulsarWebSocketMessageId | PulsarWebSocketError): void {
    clearTimeout(pending.timer);
    this.inflight.delete(pending.context);
    if (outcome instanceof PulsarWebSocketError) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  private handleAck(text: string): void {
    let ack: ProducerAck;
    try {
      ack = JSON.parse(text) as ProducerAck;
    } catch {
      return;
    }
    // Acks without a context answer frames the broker could not parse; this client only writes valid JSON.
    const pending = typeof ack.context === 'string' ? this.inflight.get(ack.context) : undefined;
    if (!pending) return;
    if (ack.result === 'ok') {
      this.settle(pending, new PulsarWebSocketMessageId(String(ack.messageId ?? '')));
    } else {
      this.settle(
        pending,
        new PulsarWebSocketError(
          `Failed to send message to topic ${this.topic.full}: broker answered ${ack.result ?? 'no result'}` +
            (ack.errorMsg ? ` - ${summarizeBrokerMessage(ack.errorMsg)}` : ''),
          { code: 'SendError', topic: this.topic.full, ...(ack.errorMsg ? { brokerMessage: ack.errorMsg } : {}) },
        ),
      );
    }
  }

  private failInflight(cause: PulsarWebSocketError): void {
    for (const pending of [...this.inflight.values()]) {
      this.settle(
        pending,
        new PulsarWebSocketError(
          `Failed to send message to topic ${this.topic.full}: the connection was lost before the broker ` +
            `acknowledged it, so it may or may not have been stored (${cause.message})`,
          {
            code: 'ConnectionClosed',
            topic: this.topic.full,
            cause,
            ...(cause.closeCode ? { closeCode: cause.closeCode } : {}),
          },
        ),
      );
    }
  }

  private timeout(pending: PendingSend): void {
    const index = this.queued.indexOf(pending);
    if (index >= 0) this.queued.splice(index, 1);
    else if (this.inflight.get(pending.context) !== pending) return;
    const last = this.connection.lastError;
    const disconnected = !this.connection.isOpen() && last ? ` (not connected: ${last.message})` : '';
    this.settle(
      pending,
      new PulsarWebSocketError(
        `Failed to send message to topic ${this.topic.full}: no acknowledgement within ${this.sendTimeoutMs} ms ` +
          `(SendTimeout)${disconnected}`,
        { code: 'SendTimeout', topic: this.topic.full, ...(disconnected ? { cause: last } : {}) },
      ),
    );
  }
}
