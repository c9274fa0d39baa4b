// The native producer adapter: each message its own entry unless batching is asked for; on a batching producer it
// flushes a send that has no other send in flight (it would wait for the batch timer), never one made while others
// are in flight, and never on a producer that does not batch.
import { toLibraryClient } from '../../../../lib/pulsar/library-client.js';
import type { PulsarClientLike, PulsarProducerConfig } from '../../../../lib/pulsar/client-types.js';

function standInNativeClient() {
  const made: Array<{ config: PulsarProducerConfig; flushes: number; answer: Array<() => void> }> = [];
  const client = {
    createReader: () => undefined,
    getPartitionsForTopic: () => undefined,
    subscribe: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
    createProducer: (config: PulsarProducerConfig) => {
      const record = { config, flushes: 0, answer: [] as Array<() => void> };
      made.push(record);
      return Promise.resolve({
        send: () => new Promise<null>((resolve) => record.answer.push(() => resolve(null))),
        flush: () => {
          record.flushes += 1;
          return Promise.resolve(null);
        },
        close: () => Promise.resolve(null),
        getTopic: () => config.topic,
        isConnected: () => true,
      });
    },
  };
  return { client: toLibraryClient(client as unknown as PulsarClientLike), made };
}

const message = { data: Buffer.from('{}'), properties: {} };

describe('the native producer adapter', () => {
  it('flushes a lone send on a batching producer, and not the sends made while it is in flight', async () => {
    const { client, made } = standInNativeClient();
    const producer = await client.createProducer({ topic: 'orders', batchingEnabled: true });
    const first = producer.send(message);
    const second = producer.send(message);
    expect(made[0]!.flushes).toBe(1);
    made[0]!.answer.splice(0).forEach((answer) => answer());
    await Promise.all([first, second]);
    expect(made[0]!.flushes).toBe(1);
  });

  it('flushes again once nothing is in flight', async () => {
    const { client, made } = standInNativeClient();
    const producer = await client.createProducer({ topic: 'orders', batchingEnabled: true });
    for (let i = 0; i < 3; i++) {
      const sent = producer.send(message);
      made[0]!.answer.shift()!();
      await sent;
    }
    expect(made[0]!.flushes).toBe(3);
  });

  it('does not batch unless asked to, even when the setting is given as undefined', async () => {
    const { client, made } = standInNativeClient();
    await client.createProducer({ topic: 'orders' });
    await client.createProducer({ topic: 'orders', batchingEnabled: undefined });
    await client.createProducer({ topic: 'orders', batchingEnabled: true });
    expect(made.map((record) => (record.config as { batchingEnabled?: boolean }).batchingEnabled)).toEqual([
      false,
      false,
      true,
    ]);
    // Batches, when asked for, hold one key each (Key_Shared).
    expect((made[2]!.config as { batchingType?: string }).batchingType).toBe('KeyBasedBatching');
  });

  it('never flushes a producer without batching (the default; chunking turns batching off too)', async () => {
    const { client, made } = standInNativeClient();
    for (const config of [{}, { batchingEnabled: false }, { chunkingEnabled: true }]) {
      const producer = await client.createProducer({ topic: 'orders', ...config });
      const sent = producer.send(message);
      made.at(-1)!.answer.shift()!();
      await sent;
    }
    expect(made.map((record) => record.flushes)).toEqual([0, 0, 0]);
  });
});
