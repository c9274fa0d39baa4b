// Which producers the server owns and its defaults (docs/configuration.md), with a fake client.
import 'reflect-metadata';
import { BabelPulsarServer } from '../../../../lib/nest/index.js';
import { resolveServerOptions } from '../../../../lib/nest/server/server-options.js';
import type {
  PulsarClientLike,
  PulsarConsumerConfig,
  PulsarProducerConfig,
} from '../../../../lib/pulsar/client-types.js';
import { FakeConsumer, FakeProducer } from '../../../support/fakes.js';

const quiet = { log: () => {}, warn: () => {}, error: () => {} };

function fakeClient() {
  const producers: FakeProducer[] = [];
  const consumers: Array<FakeConsumer & { config: PulsarConsumerConfig }> = [];
  const client: PulsarClientLike = {
    createProducer: async (config: PulsarProducerConfig) => {
      const producer = new FakeProducer(config.topic);
      producers.push(producer);
      return producer;
    },
    subscribe: async (config: PulsarConsumerConfig) => {
      const consumer = Object.assign(new FakeConsumer(), { config });
      consumers.push(consumer);
      return consumer;
    },
    close: async () => {},
  };
  return { client, producers, consumers };
}

const listen = (server: BabelPulsarServer) =>
  new Promise<void>((resolve, reject) => server.listen((error) => (error ? reject(error) : resolve())));

describe('BabelPulsarServer producers', () => {
  it('creates a retry producer on the topic and a dead-letter producer on <topic>.dlq, and closes both on close()', async () => {
    const { client, producers, consumers } = fakeClient();
    const server = new BabelPulsarServer({ client, topics: 'orders', logger: quiet });
    await listen(server);
    expect(producers.map((p) => p.getTopic())).toEqual(['orders', 'orders.dlq']);
    // Besides the topic's own, the DLQ's redrive subscription is created (and its consumer closed at once).
    const main = consumers.find((consumer) => consumer.config.topic === 'orders')!;
    expect(main.config).toMatchObject({
      topic: 'orders',
      subscription: 'babelqueue',
      subscriptionType: 'Shared',
    });
    await server.close();
    expect(producers.every((p) => p.closed)).toBe(true);
    expect(consumers.every((consumer) => consumer.closed)).toBe(true);
  });

  it('never closes a retry or dead-letter producer it was given (66)', async () => {
    const { client, producers } = fakeClient();
    const retry = new FakeProducer('orders');
    const deadLetter = new FakeProducer('somewhere.dlq');
    const server = new BabelPulsarServer({ client, topics: 'orders', retry, deadLetter, logger: quiet });
    await listen(server);
    expect(producers).toHaveLength(0);
    await server.close();
    expect(retry.closed).toBe(false);
    expect(deadLetter.closed).toBe(false);
  });

  it("creates no retry producer with retry 'nack' and no dead-letter producer with deadLetter false", async () => {
    const { client, producers } = fakeClient();
    const server = new BabelPulsarServer({ client, topics: 'orders', retry: 'nack', deadLetter: false, logger: quiet });
    await listen(server);
    expect(producers).toHaveLength(0);
    await server.close();
  });

  it('writes dead letters to a named topic when deadLetter is a string', async () => {
    const { client, producers } = fakeClient();
    const server = new BabelPulsarServer({ client, topics: ['a', 'b'], deadLetter: 'all.dlq', logger: quiet });
    await listen(server);
    expect(producers.map((p) => p.getTopic())).toEqual(['a', 'all.dlq', 'b', 'all.dlq']);
    await server.close();
  });

  it('defaults: maxAttempts 3, subscription babelqueue, Shared, concurrency 1', () => {
    const { client } = fakeClient();
    expect(resolveServerOptions({ client, topics: 'orders' })).toMatchObject({
      maxAttempts: 3,
      subscription: 'babelqueue',
      subscriptionType: 'Shared',
      concurrency: 1,
    });
  });
});
