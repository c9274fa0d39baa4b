// Pulsar's own producer and consumer settings passed through by the library, on the client under test
// (scripts/run-tests.mjs runs this file on the native client and on the WebSocket client): that they reach the
// broker, that the ones a client cannot honour are refused at start-up naming the setting and the client, that
// chunking makes a message above the broker's maxMessageSize publishable on native, and that messages without a
// key are spread over a partitioned topic's partitions on both clients.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, type PulsarClientLike } from '../../../lib/index.js';
import { createPartitionedTopic, deletePartitionedTopic } from '../../../scripts/lib/scale-run.mjs';
import { newClient, onNative, receiveN, testClientKind, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:options:checked';
const received: string[] = [];

@Controller()
class NamedConsumerHandler {
  @BabelHandler(URN, { consumerOptions: { consumerName: 'options-test-consumer', receiverQueueSize: 5 } })
  handle(@Payload() data: { name: string }): void {
    received.push(data.name);
  }
}

interface TopicStats {
  publishers: Array<{ producerName?: string }>;
  subscriptions: Record<string, { consumers: Array<{ consumerName?: string }> }>;
}

async function topicStats(topic: string): Promise<TopicStats> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`);
  if (!response.ok) throw new Error(`stats of ${topic}: HTTP ${response.status}`);
  return (await response.json()) as TopicStats;
}

async function brokerMaxMessageSize(): Promise<number> {
  const response = await fetch(`${webUrl()}/admin/v2/brokers/configuration/runtime`);
  const runtime = (await response.json()) as Record<string, string>;
  return Number(runtime.maxMessageSize ?? 5 * 1024 * 1024);
}

let client: PulsarClientLike;

beforeAll(() => {
  client = newClient();
});

afterAll(async () => {
  await client.close();
});

describe(`Pulsar client options (${testClientKind()})`, () => {
  let service: RunningService | undefined;
  let publisher: BabelPulsarClient | undefined;

  afterEach(async () => {
    await service?.close();
    await publisher?.close();
    service = undefined;
    publisher = undefined;
  });

  it('passes consumer and producer settings to the broker (names visible in the topic stats)', async () => {
    const topic = uniqueTopic('options-named');
    service = await startService([NamedConsumerHandler], {
      client,
      topics: topic,
      subscription: 'named',
      deadLetter: false,
    });
    publisher = new BabelPulsarClient({
      client,
      topic,
      producerOptionsByTopic: { [topic]: { producerName: `options-producer-${topic}`, compressionType: 'LZ4' } },
    });
    await publisher.publish(URN, { name: 'first' });
    await waitFor('the message handled', () => received.includes('first'));
    const stats = await topicStats(topic);
    expect(stats.publishers.map((p) => p.producerName)).toContain(`options-producer-${topic}`);
    expect(stats.subscriptions.named?.consumers.map((c) => c.consumerName)).toEqual(['options-test-consumer']);
  });

  it('spreads messages without a key over every partition of a partitioned topic', async () => {
    const topic = uniqueTopic('options-spread');
    await createPartitionedTopic(webUrl(), topic, 4);
    try {
      const consumer = await client.subscribe({
        topic,
        subscription: 'spread',
        subscriptionType: 'Shared',
        subscriptionInitialPosition: 'Earliest',
      });
      publisher = new BabelPulsarClient({ client, topic });
      for (let i = 0; i < 40; i += 1) await publisher.publish(URN, { name: `m${i}` });
      const messages = await receiveN(consumer, 40);
      await consumer.close();
      const perPartition = [0, 1, 2, 3].map(
        (p) => messages.filter((m) => m.getTopicName().endsWith(`-partition-${p}`)).length,
      );
      console.log(
        `[options] ${testClientKind()}: 40 messages without a key over 4 partitions: ${perPartition.join('/')}`,
      );
      expect(perPartition.every((count) => count > 0)).toBe(true);
    } finally {
      await deletePartitionedTopic(webUrl(), topic);
    }
  });

  it('chunking: a message above maxMessageSize is published on native, refused at start-up on WebSocket', async () => {
    const topic = uniqueTopic('options-chunked');
    const options = { client, topic, producerOptionsByTopic: { [topic]: { chunkingEnabled: true } } };
    if (!onNative()) {
      expect(() => new BabelPulsarClient(options)).toThrow(
        /producerOptionsByTopic\[".+"\]\.chunkingEnabled is not supported by the WebSocket client/,
      );
      return;
    }
    const limit = await brokerMaxMessageSize();
    const consumer = await client.subscribe({ topic, subscription: 'chunks', subscriptionInitialPosition: 'Earliest' });
    const big = 'x'.repeat(limit + 64 * 1024);
    const plain = new BabelPulsarClient({ client, topic });
    await expect(plain.publish(URN, { name: 'too-big', big })).rejects.toThrow(/MessageTooBig|too big|too large/i);
    await plain.close();
    publisher = new BabelPulsarClient(options);
    await publisher.publish(URN, { name: 'chunked', big });
    const [message] = await receiveN(consumer, 1);
    await consumer.close();
    const envelope = JSON.parse(message!.getData().toString('utf8')) as { data: { name: string; big: string } };
    expect(envelope.data.name).toBe('chunked');
    expect(envelope.data.big.length).toBe(big.length);
  });

  it('starts and consumes with the settings only this client has (native: Key_Shared policy; WebSocket: priority)', async () => {
    const topic = uniqueTopic('options-own');
    service = await startService([NamedConsumerHandler], {
      client,
      topics: topic,
      subscriptionType: onNative() ? 'KeyShared' : 'Shared',
      consumerOptions: onNative()
        ? {
            keySharedPolicy: { keyShareMode: 'AutoSplit', allowOutOfOrderDelivery: true },
            replicateSubscriptionState: true,
          }
        : { priorityLevel: 1, ackTimeoutMs: 60_000 },
      deadLetter: false,
    });
    publisher = new BabelPulsarClient({
      client,
      topic,
      producerOptions: { batchingEnabled: true, batchingMaxMessages: 10 },
    });
    await publisher.publish(URN, { name: 'own-settings' }, { key: 'k' });
    await waitFor('the message handled', () => received.includes('own-settings'));
  });

  it('refuses at start-up a consumer setting the client cannot honour, naming it and the client', async () => {
    const topic = uniqueTopic('options-refused');
    const [setting, refusal] = onNative()
      ? [{ priorityLevel: 1 }, /priorityLevel is not supported by the native pulsar-client/]
      : [
          { keySharedPolicy: { keyShareMode: 'AutoSplit' as const } },
          /keySharedPolicy is not supported by the WebSocket client/,
        ];
    await expect(
      startService([NamedConsumerHandler], { client, topics: topic, consumerOptions: setting, deadLetter: false }),
    ).rejects.toThrow(refusal);
  });
});
