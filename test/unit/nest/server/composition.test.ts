// The composition matrix on the testing kit: each pair of features that can meet in one subscription (the same
// scenarios run on the real broker, on both clients, in test/integration/server/composition.test.ts).
import { jest } from '@jest/globals';
import type { PulsarConsumer, PulsarConsumerConfig } from '../../../../lib/pulsar/client-types.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';
import { compositionScenarios } from '../../../support/composition-scenarios.js';

jest.setTimeout(20_000);

/** The kit, noting which consumers are open with which settings (what the broker's stats show). */
class ObservedPulsar extends InMemoryPulsar {
  readonly open = new Set<PulsarConsumerConfig>();

  override async subscribe(config: PulsarConsumerConfig): Promise<PulsarConsumer> {
    const consumer = await super.subscribe(config);
    this.open.add(config);
    const close = consumer.close.bind(consumer);
    consumer.close = async () => {
      this.open.delete(config);
      await close();
    };
    return consumer;
  }
}

const full = (topic: string) => (topic.includes('://') ? topic : `persistent://public/default/${topic}`);

describe('features that compose (testing kit)', () => {
  let count = 0;
  for (const [name, scenario] of Object.entries(compositionScenarios)) {
    it(name, async () => {
      const pulsar = new ObservedPulsar();
      await scenario({
        client: pulsar,
        prefix: (what) => `${what}-${(count += 1)}`,
        consumerNames: async (topic, subscription) =>
          [...pulsar.open]
            .filter((config) => full(config.topic) === full(topic) && config.subscription === subscription)
            .map((config) => config.consumerName ?? '(no name)'),
      });
    });
  }
});
