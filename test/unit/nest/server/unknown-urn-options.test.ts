// unknownUrn on the server and in `handlers`: where 'release' can work, the strategy a subscription's handlers agree
// on, and a disagreement refused (testing kit).
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { BabelHandler, BabelPulsarServer } from '../../../../lib/nest/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';
import type { PulsarClientLike } from '../../../../lib/pulsar/client-types.js';
import { FakeProducer } from '../../../support/fakes.js';
import { startService } from '../../../support/nest-app.js';
import { publishTo } from '../../../support/batch-scenario.js';
import { until } from '../../../support/recording.js';

const client = {
  createProducer: async () => new FakeProducer('x'),
  subscribe: async () => ({}),
  close: async () => {},
} as unknown as PulsarClientLike;

describe('server option unknownUrn', () => {
  it("accepts 'release' on Shared and KeyShared, refuses it on Exclusive and Failover", () => {
    for (const subscriptionType of ['Shared', 'KeyShared'] as const)
      expect(
        () => new BabelPulsarServer({ client, topics: 'o', subscriptionType, unknownUrn: 'release' }),
      ).not.toThrow();
    for (const subscriptionType of ['Exclusive', 'Failover'] as const)
      expect(() => new BabelPulsarServer({ client, topics: 'o', subscriptionType, unknownUrn: 'release' })).toThrow(
        /options\.unknownUrn 'release' needs a Shared or KeyShared subscription/,
      );
  });

  it('refuses a bound below 1 and a strategy of another name', () => {
    expect(() => new BabelPulsarServer({ client, topics: 'o', unknownUrnMaxReleases: 0 })).toThrow(
      /options\.unknownUrnMaxReleases must be an integer >= 1, got the number 0/,
    );
    expect(() => new BabelPulsarServer({ client, topics: 'o', unknownUrn: 'drop' as never })).toThrow(
      /options\.unknownUrn must be 'fail', 'dead_letter', 'delete' or 'release'/,
    );
  });
});

@Controller()
class Orders {
  @BabelHandler('urn:uu:orders:created')
  created() {}

  @BabelHandler('urn:uu:orders:paid')
  paid() {}
}

describe('unknownUrn from handlers (testing kit)', () => {
  it("a handler's entry gives its subscription the strategy; the server's default stays elsewhere", async () => {
    const pulsar = new InMemoryPulsar();
    const service = await startService([Orders], {
      client: pulsar,
      topics: 'home',
      handlers: { 'urn:uu:orders:paid': { topic: 'payments', unknownUrn: 'delete' } },
    });
    try {
      await publishTo(pulsar, 'payments', [['urn:uu:nobody', {} as never]]);
      await publishTo(pulsar, 'home', [['urn:uu:nobody', {} as never]]);
      await until(() => service.settled.length >= 2);
      const on = (topic: string) => service.settled.find((event) => event.topic.endsWith(topic));
      expect(on('payments')).toMatchObject({ action: 'ack', unknownUrn: 'delete' });
      expect(on('home')).toMatchObject({ action: 'retry', unknownUrn: 'fail' });
    } finally {
      await service.close();
    }
  });

  it('refuses two handlers of one subscription that give different strategies', async () => {
    await expect(
      startService([Orders], {
        client: new InMemoryPulsar(),
        topics: 'home',
        handlers: {
          'urn:uu:orders:created': { unknownUrn: 'release' },
          'urn:uu:orders:paid': { unknownUrn: 'dead_letter' },
        },
      }),
    ).rejects.toThrow(/Orders\.\w+ and Orders\.\w+ share the consumer of topic home .* different unknownUrn/);
  });
});
