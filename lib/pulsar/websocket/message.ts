import type { PulsarMessage } from '../client-types.js';
import { partitionTopicName } from '../topic-name.js';
import { isWireMessageId, PulsarWebSocketMessageId } from './message-id.js';

/** A message frame as the broker pushes it to a WebSocket consumer (ConsumerMessage, JSON NON_NULL). */
export interface ConsumerMessageFrame {
  messageId: string;
  payload: string;
  properties?: Record<string, string>;
  /** Formatted date string, e.g. `2026-11-30T09:35:12.273Z` (not epoch ms). */
  publishTime?: string;
  eventTime?: string;
  redeliveryCount?: number;
  key?: string;
}

export function isConsumerMessageFrame(value: unknown): value is ConsumerMessageFrame {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return isWireMessageId(v.messageId) && typeof v.payload === 'string';
}

/** Epoch ms of a broker date string; 0 when absent or unparsable (the native client's "unset" value). */
function parseBrokerDate(text: string | undefined): number {
  if (!text) return 0;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : 0;
}

export class PulsarWebSocketMessage implements PulsarMessage {
  private readonly data: Buffer;
  private readonly id: PulsarWebSocketMessageId;

  /** @internal */
  constructor(
    private readonly frame: ConsumerMessageFrame,
    private readonly topic: string,
    /** @internal socket generation the message arrived on */
    readonly generation: number,
  ) {
    this.data = Buffer.from(frame.payload, 'base64');
    this.id = new PulsarWebSocketMessageId(frame.messageId);
  }

  getData(): Buffer {
    return this.data;
  }

  getProperties(): Record<string, string> {
    return { ...(this.frame.properties ?? {}) };
  }

  getRedeliveryCount(): number {
    return this.frame.redeliveryCount ?? 0;
  }

  getMessageId(): PulsarWebSocketMessageId {
    return this.id;
  }

  /**
   * The topic the message was stored on. On a partitioned topic that is one partition (`…/orders-partition-2`),
   * as the native client reports it: the WebSocket frame names no topic, but the message id carries the partition.
   */
  getTopicName(): string {
    return partitionTopicName(this.topic, this.id.partition);
  }

  getPublishTimestamp(): number {
    return parseBrokerDate(this.frame.publishTime);
  }

  getEventTimestamp(): number {
    return parseBrokerDate(this.frame.eventTime);
  }

  getPartitionKey(): string {
    return this.frame.key ?? '';
  }
}
