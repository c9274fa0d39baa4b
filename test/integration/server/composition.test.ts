// The composition matrix on the real broker, on the client under test (the runner runs this file on both): the
// scenarios of the kit's matrix, and the pair that only a real client's receiver queue shows.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { createPulsarClient, pulsarProperties } from '../../../lib/pulsar/index.js';
import { backlog, serviceUrl, sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { compositionScenarios } from '../../support/composition-scenarios.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(90_000);

interface TopicStats {
  subscriptions: Record<
    string,
    { msgBacklog: number; unackedMessages: number; consumers: Array<{ consumerName: string }> }
  >;
}

async function statsOf(topic: string): Promise<TopicStats> {
  const local = topic.replace(/^persistent:\/\/public\/default\//, '');
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${local}/stats`);
  return (await response.json()) as TopicStats;
}

let client: PulsarClientLike;
// Made by the library, so that topic patterns can list the namespace through the admin API.
beforeAll(async () => {
  ({ client } = await createPulsarClient({ serviceUrl: serviceUrl() }));
});
afterAll(async () => {
  await client.close();
});

describe('features that compose (broker)', () => {
  for (const [name, scenario] of Object.entries(compositionScenarios)) {
    it(name, async () => {
      await scenario({
        client,
        prefix: (what) => uniqueTopic(what),
        consumerNames: async (topic, subscription) =>
          ((await statsOf(topic)).subscriptions[subscription]?.consumers ?? []).map(({ consumerName }) => consumerName),
      });
    });
  }

  it('pause × consumerOptions.receiverQueueSize: the paused consumer takes no more than that queue allows', async () => {
    const topic = uniqueTopic('comp-queue');
    const handled: number[] = [];
    @Controller()
    class Counted {
      @BabelHandler('urn:comp:queue', { consumerOptions: { receiverQueueSize: 5 } })
      count(@Payload() data: { n: number }) {
        handled.push(data.n);
      }
    }
    let service: RunningService | undefined;
    try {
      service = await startService([Counted], { client, topics: topic });
      await service.server.pause();
      // Unbatched, so that the broker counts messages as the receiver queue does (a batch is one entry).
      const producer = await client.createProducer({ topic, batchingEnabled: false });
      const sends: Array<Promise<unknown>> = [];
      for (let n = 1; n <= 60; n++) {
        const envelope = EnvelopeCodec.make('urn:comp:queue', { n }, { queue: topic });
        sends.push(
          producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) }),
        );
      }
      await Promise.all(sends);
      await producer.close();
      await sleep(1000);
      const subscription = (await statsOf(topic)).subscriptions.babelqueue!;
      // As with the library's own receiverQueueSize (docs/pulsar-features.md#pause-and-resume).
      expect(subscription.unackedMessages).toBeLessThanOrEqual(11);
      expect(handled).toEqual([]);
      service.server.resume();
      await waitFor('all sixty after resume', () => handled.length === 60);
      await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    } finally {
      await service?.close();
    }
  });
});
