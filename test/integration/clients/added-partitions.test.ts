// Partitions added to a partitioned topic while a server consumes it and a publisher writes to it: what running
// consumers and producers do (docs/pulsar-features.md#partitions). Both clients notice new partitions only on
// their partition update timer (about a minute; neither can be shortened from Node), so the native pass checks
// both clients side by side in one such wait instead of waiting a minute in each pass; the WebSocket pass skips.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarClient, type PulsarClientLike } from '../../../lib/index.js';
import { createPartitionedTopic, deletePartitionedTopic } from '../../../scripts/lib/scale-run.mjs';
import {
  loadNative,
  nativeServiceUrl,
  newWebSocketClient,
  onNative,
  uniqueTopic,
  waitFor,
  webUrl,
} from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(150_000);

const URN = 'urn:babel:partitions:added';
/** Handled messages: `<topic> <name> <partition>`. */
const handled: Array<{ topic: string; name: string; partition: number }> = [];

@Controller()
class AddedPartitionsHandler {
  @BabelHandler(URN)
  handle(@Payload() data: { name: string }, @Ctx() ctx: BabelContext): void {
    handled.push({ topic: ctx.getTopic(), name: data.name, partition: ctx.getPartition() });
  }
}

interface PartitionStats {
  msgInCounter: number;
  subscriptions: Record<string, { consumers: unknown[] }>;
}

async function perPartition(topic: string): Promise<PartitionStats[]> {
  const url = `${webUrl()}/admin/v2/persistent/public/default/${topic}/partitioned-stats?perPartition=true`;
  const stats = (await (await fetch(url)).json()) as { partitions: Record<string, PartitionStats> };
  return Object.entries(stats.partitions)
    .sort(([a], [b]) => Number(a.split('-partition-')[1]) - Number(b.split('-partition-')[1]))
    .map(([, partition]) => partition);
}

async function addPartitions(topic: string, partitions: number): Promise<void> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/partitions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(partitions),
  });
  if (!response.ok) throw new Error(`updating ${topic} to ${partitions} partitions: HTTP ${response.status}`);
}

interface Side {
  kind: 'native' | 'websocket';
  client: PulsarClientLike;
  topic: string;
  service?: RunningService;
  publisher?: BabelPulsarClient;
}

const handledOn = (side: Side) => handled.filter((entry) => entry.topic === side.topic);

(onNative() ? describe : describe.skip)('partitions added at run time (native and WebSocket side by side)', () => {
  const sides: Side[] = [];

  beforeAll(async () => {
    sides.push(
      {
        kind: 'native',
        client: new (loadNative().Client)({ serviceUrl: nativeServiceUrl() }),
        topic: uniqueTopic('added-partitions-native'),
      },
      { kind: 'websocket', client: newWebSocketClient(), topic: uniqueTopic('added-partitions-websocket') },
    );
    for (const side of sides) {
      await createPartitionedTopic(webUrl(), side.topic, 2);
      side.service = await startService([AddedPartitionsHandler], {
        client: side.client,
        topics: side.topic,
        deadLetter: false,
      });
      side.publisher = new BabelPulsarClient({ client: side.client, topic: side.topic });
      await side.publisher.publish(URN, { name: 'before' });
    }
  });

  afterAll(async () => {
    for (const side of sides) {
      await side.service?.close();
      await side.publisher?.close();
      await side.client.close();
      await deletePartitionedTopic(webUrl(), side.topic);
    }
  });

  it('a new producer writes to the new partitions at once; running ones, and the server, pick them up later; nothing is lost', async () => {
    await Promise.all(sides.map((side) => waitFor('the first message', () => handledOn(side).length === 1)));
    for (const side of sides) await addPartitions(side.topic, 4);
    const added = Date.now();

    // The broker creates the subscription on the new partitions when the topic is updated, so what is published
    // there before the running consumer attaches waits for it.
    for (const side of sides) {
      const fresh = new BabelPulsarClient({ client: side.client, topic: side.topic });
      for (let i = 0; i < 8; i += 1) await fresh.publish(URN, { name: `fresh-${i}` });
      await fresh.close();
      const stats = await perPartition(side.topic);
      expect(stats).toHaveLength(4);
      expect(stats[2]!.msgInCounter + stats[3]!.msgInCounter).toBeGreaterThan(0);
      expect(Object.keys(stats[2]!.subscriptions)).toEqual(['babelqueue']);
      expect(stats[2]!.subscriptions.babelqueue!.consumers).toHaveLength(0);
    }

    // The running server consumes the new partitions once its client's partition update timer has fired.
    await Promise.all(
      sides.map(async (side) => {
        await waitFor(
          `the ${side.kind} server consuming the new partitions`,
          () => handledOn(side).filter((entry) => entry.name.startsWith('fresh-')).length === 8,
          120_000,
        );
        console.log(
          `[partitions] ${side.kind}: the running server consumed the new partitions ` +
            `${Math.round((Date.now() - added) / 1000)} s after they were added`,
        );
      }),
    );
    for (const side of sides) {
      // Which new partitions the fresh producer chose depends on its round-robin timing (native switches
      // partition per batch window): what matters is that the server handled messages from the new ones.
      const partitions = new Set(handledOn(side).map((entry) => entry.partition));
      expect([...partitions].some((partition) => partition >= 2)).toBe(true);
      // The running publisher's own timer fires about when the server's did: it then writes to the new partitions.
      const before = (await perPartition(side.topic)).map((partition) => partition.msgInCounter);
      let sent = 0;
      await waitFor(
        `the running ${side.kind} publisher writing to the new partitions`,
        async () => {
          await side.publisher!.publish(URN, { name: `running-${sent++}` });
          const after = (await perPartition(side.topic)).map((partition) => partition.msgInCounter);
          return after[2]! > before[2]! && after[3]! > before[3]!;
        },
        30_000,
      );
      await waitFor('every message handled', () => handledOn(side).length === 1 + 8 + sent);
    }
  });
});
