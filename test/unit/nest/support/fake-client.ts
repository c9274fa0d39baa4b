// A fake Pulsar client that records producers and sends, with hooks to delay or fail producer creation.
import type { PulsarClientLike, PulsarConsumer, PulsarProducerConfig } from '../../../../lib/pulsar/client-types.js';
import { FakeProducer } from '../../../support/fakes.js';

export class FakeClient implements PulsarClientLike {
  readonly producers: FakeProducer[] = [];
  readonly journal: string[] = [];
  createCalls = 0;
  closed = false;
  /** When set, createProducer waits for it. */
  gate: Promise<void> | null = null;
  failCreateWith: Error | null = null;

  async createProducer(config: PulsarProducerConfig): Promise<FakeProducer> {
    this.createCalls++;
    this.journal.push(`create:${config.topic}`);
    if (this.gate) await this.gate;
    if (this.failCreateWith) throw this.failCreateWith;
    const producer = new FakeProducer(config.topic, this.journal);
    this.producers.push(producer);
    return producer;
  }

  async subscribe(): Promise<PulsarConsumer> {
    throw new Error('FakeClient does not consume');
  }

  async close(): Promise<null> {
    this.closed = true;
    this.journal.push('client:close');
    return null;
  }
}
