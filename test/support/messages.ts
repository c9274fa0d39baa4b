// Builders for test messages: envelopes, payloads and fake Pulsar messages.
import { EnvelopeCodec, type Envelope } from '../../lib/envelope/index.js';
import { pulsarProperties } from '../../lib/pulsar/binding.js';
import type { PulsarMessage } from '../../lib/pulsar/client-types.js';

export function envelopeOf(
  urn = 'urn:babel:orders:created',
  data: Record<string, unknown> = { order_id: 1042 },
): Envelope {
  return EnvelopeCodec.make(urn, data, { queue: 'orders' });
}

export function wire(envelope: Envelope | Record<string, unknown>): {
  payload: Buffer;
  properties: Record<string, string>;
} {
  return { payload: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) };
}

let sequence = 0;

export class FakeMessage implements PulsarMessage {
  readonly id = `fake-${++sequence}`;
  constructor(
    readonly payload: Buffer,
    readonly properties: Record<string, string>,
    readonly redeliveryCount = 0,
    readonly topic = 'persistent://public/default/orders',
  ) {}
  getData(): Buffer {
    return this.payload;
  }
  getProperties(): Record<string, string> {
    return { ...this.properties };
  }
  getRedeliveryCount(): number {
    return this.redeliveryCount;
  }
  getMessageId(): { toString(): string } {
    return { toString: () => this.id };
  }
  getTopicName(): string {
    return this.topic;
  }
  getPublishTimestamp(): number {
    return 0;
  }
  getPartitionKey(): string {
    return '';
  }
}
