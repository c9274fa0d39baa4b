// Topic patterns on the testing kit (the InMemoryPulsar lists its topics as the admin API does), and the start-up
// refusal for a client whose broker's admin API the library does not know.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelNonRetriableError, EnvelopeCodec } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import type { PulsarClientLike } from '../../../lib/pulsar/client-types.js';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import { FakeConsumer, FakeProducer } from '../../support/fakes.js';
import { startService } from '../../support/nest-app.js';

jest.setTimeout(20_000);

const handled: Array<{ n: number; topic: string; attempts: number }> = [];

@Controller()
class KitPatternOrders {
  @BabelHandler('urn:babel:kit-pattern:order', { topicsPattern: 'kit-orders-.+', patternDiscoveryMs: 100 })
  order(@Payload() data: { n: number; fail?: 'once' | 'refuse' }, @Ctx() ctx: BabelContext) {
    handled.push({ n: data.n, topic: ctx.getTopic(), attempts: ctx.getAttempts() });
    if (data.fail === 'refuse') throw new BabelNonRetriableError(`order ${data.n} refused`);
    if (data.fail === 'once' && ctx.getAttempts() === 0) throw new Error('try again');
  }
}

const full = (local: string) => `persistent://public/default/${local}`;

async function publish(client: PulsarClientLike, topic: string, data: Record<string, unknown>) {
  const envelope = EnvelopeCodec.make('urn:babel:kit-pattern:order', data, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
}

describe('topic patterns (testing kit)', () => {
  it('consumes the matching topics and a later one, each message settled on its own topic', async () => {
    const pulsar = new InMemoryPulsar();
    await publish(pulsar, 'kit-orders-a', { n: 0 });
    const service = await startService([KitPatternOrders], { client: pulsar, topics: 'unused', maxAttempts: 2 });
    try {
      await publish(pulsar, 'kit-orders-a', { n: 1, fail: 'once' });
      await publish(pulsar, 'kit-orders-b', { n: 2, fail: 'refuse' });
      while (service.settled.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      expect([...handled].sort((x, y) => x.n - y.n || x.attempts - y.attempts)).toEqual([
        { n: 1, topic: 'kit-orders-a', attempts: 0 },
        { n: 1, topic: 'kit-orders-a', attempts: 1 },
        { n: 2, topic: 'kit-orders-b', attempts: 0 },
      ]);
      expect(pulsar.published('kit-orders-a').map(({ properties }) => properties['bq-attempts'])).toEqual([
        '0',
        '0',
        '1',
      ]);
      expect(pulsar.published('kit-orders-b.dlq')).toHaveLength(1);
      expect(service.settled.find(({ action }) => action === 'dead-letter')?.deadLetterTopic).toBe(
        full('kit-orders-b.dlq'),
      );
    } finally {
      await service.close();
    }
  });

  it('refuses a single retry producer: a retry goes back to its own topic', async () => {
    const pulsar = new InMemoryPulsar();
    await expect(
      startService([KitPatternOrders], { client: pulsar, topics: 'unused', retry: new FakeProducer('retries') }),
    ).rejects.toThrow(
      'KitPatternOrders.order names its own topicsPattern, but options.retry is a single producer: a retry goes back ' +
        "to its own topic; use retry 'republish'",
    );
  });

  it('refuses to start, naming the option, when the client cannot list topics', async () => {
    const client: PulsarClientLike = {
      createProducer: async (config) => new FakeProducer(config.topic),
      subscribe: async () => new FakeConsumer(),
      close: async () => {},
    };
    await expect(startService([KitPatternOrders], { client, topics: 'unused' })).rejects.toThrow(
      "KitPatternOrders.order: topicsPattern persistent://public/default/kit-orders-.+ needs the broker's admin API " +
        'to list the topics of public/default, and this client was not created by the library',
    );
  });
});
