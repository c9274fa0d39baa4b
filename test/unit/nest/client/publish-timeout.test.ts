// publish() does not hang while the broker does not answer, and emit() failures are never silent.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { BabelPulsarClient, PublishError, type PulsarClientLike } from '../../../../lib/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';

/** A client whose broker never answers: producers are never created. */
const silentBroker = (): PulsarClientLike => ({
  createProducer: () => new Promise(() => {}),
  subscribe: () => new Promise(() => {}),
  close: async () => null,
});

describe('publish time-out', () => {
  it('rejects after the per-call time-out with a PublishError naming the topic and what to check', async () => {
    const client = new BabelPulsarClient({ client: silentBroker(), topic: 'orders' });
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    const publishing = client.publish('urn:babel:orders:created', {}, { timeoutMs: 50, id: 'id-1' });
    const error = (await publishing.catch((e: unknown) => e)) as PublishError;
    expect(error).toBeInstanceOf(PublishError);
    expect(error.topic).toBe('orders');
    expect(error.messageId).toBe('id-1');
    expect(error.mayHaveBeenStored).toBe(true);
    expect(error.message).toMatch(/publish to orders got no answer from the broker within 50 ms/);
    expect(error.message).toMatch(/is the broker running and reachable/);
    expect(errors).toEqual([error]);
  });

  it('uses the client-wide publishTimeoutMs, and a default well under 30 s', async () => {
    expect(new BabelPulsarClient({ client: silentBroker(), topic: 'orders' })).toBeDefined();
    const { DEFAULT_PUBLISH_TIMEOUT_MS } = await import('../../../../lib/nest/client/babel-pulsar.client.js');
    expect(DEFAULT_PUBLISH_TIMEOUT_MS).toBeLessThanOrEqual(10_000);
    const client = new BabelPulsarClient({ client: silentBroker(), topic: 'orders', publishTimeoutMs: 30 });
    await expect(client.publish('urn:babel:orders:created', {})).rejects.toThrow(/within 30 ms/);
  });

  it('refuses a time-out that is not a whole number of ms, naming its type', () => {
    expect(
      () => new BabelPulsarClient({ client: silentBroker(), topic: 'o', publishTimeoutMs: '5' as unknown as number }),
    ).toThrow(/options\.publishTimeoutMs must be a whole number of milliseconds >= 0 .*got string "5"/);
  });
});

describe('emit() failures', () => {
  it('are logged once and raised on the error event even when nobody subscribes to the Observable', async () => {
    const logged: string[] = [];
    const spy = jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      logged.push(String(message));
    });
    try {
      const client = new BabelPulsarClient({ client: new InMemoryPulsar(), topic: 'orders' });
      const errors: Error[] = [];
      client.on('error', (error) => errors.push(error));
      client.emit('urn:babel:orders:created', 'not an object');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(errors).toHaveLength(1);
      expect(errors[0]!.message).toMatch(/publish data must be a plain object/);
      expect(logged.filter((line) => line.includes('emit("urn:babel:orders:created") failed'))).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('that the broker refused are raised on the error event once, not twice', async () => {
    const pulsar = new InMemoryPulsar();
    const client = new BabelPulsarClient({ client: pulsar, topic: 'orders' });
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    await pulsar.close(); // sends now fail
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    client.emit('urn:babel:orders:created', {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toHaveLength(1);
    jest.restoreAllMocks();
  });
});
