// Construction-time validation of BabelPulsarServer (docs/configuration.md).
import 'reflect-metadata';
import { BabelPulsarServer } from '../../../../lib/nest/index.js';
import type { PulsarClientLike } from '../../../../lib/pulsar/client-types.js';
import { FakeProducer } from '../../../support/fakes.js';

const client = {
  createProducer: async () => new FakeProducer('x'),
  subscribe: async () => ({}),
  close: async () => {},
} as unknown as PulsarClientLike;

describe('BabelPulsarServer options', () => {
  it.each([0, -1, 1.5])('throws a RangeError for maxAttempts %p', (maxAttempts) => {
    expect(() => new BabelPulsarServer({ client, topics: 'orders', maxAttempts })).toThrow(RangeError);
  });

  it.each(['Exclusive', 'Failover'] as const)("refuses retry 'nack' on a %s subscription", (subscriptionType) => {
    expect(() => new BabelPulsarServer({ client, topics: 'orders', retry: 'nack', subscriptionType })).toThrow(
      /Shared or KeyShared/,
    );
  });

  it('refuses an unknown subscription type', () => {
    expect(
      () => new BabelPulsarServer({ client, topics: 'orders', retry: 'nack', subscriptionType: 'Sharded' as never }),
    ).toThrow(/subscriptionType/);
  });

  it.each(['Shared', 'KeyShared'] as const)("accepts retry 'nack' on %s", (subscriptionType) => {
    expect(() => new BabelPulsarServer({ client, topics: 'orders', retry: 'nack', subscriptionType })).not.toThrow();
  });

  it('accepts republish on every subscription type', () => {
    for (const subscriptionType of ['Exclusive', 'Failover', 'Shared', 'KeyShared'] as const) {
      expect(() => new BabelPulsarServer({ client, topics: 'orders', subscriptionType })).not.toThrow();
    }
  });

  it('names the wrong option', () => {
    expect(() => new BabelPulsarServer({ client, topics: [] })).toThrow(/options.topics/);
    expect(() => new BabelPulsarServer({ client, topics: ['a', 'a'] })).toThrow(/twice/);
    expect(() => new BabelPulsarServer({ client, topics: 'a', concurrency: 0 })).toThrow(/options.concurrency/);
    expect(() => new BabelPulsarServer({ client, topics: 'a', deadLetter: ' ' })).toThrow(/options.deadLetter/);
    expect(() => new BabelPulsarServer({ client: {} as PulsarClientLike, topics: 'a' })).toThrow(/options.client/);
    expect(() => new BabelPulsarServer({ client, topics: ['a', 'b'], retry: new FakeProducer('a') })).toThrow(
      /exactly one topic/,
    );
    expect(() => new BabelPulsarServer({ client, topics: 'a', onError: 'x' as never })).toThrow(/options.onError/);
  });

  it('unwrap() returns the client and close() is idempotent before listen', async () => {
    const server = new BabelPulsarServer({ client, topics: 'orders' });
    expect(server.unwrap()).toBe(client);
    await Promise.all([server.close(), server.close()]);
  });
});
