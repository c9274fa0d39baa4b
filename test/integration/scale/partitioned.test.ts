// Partitioned topics on the client under test (scripts/run-tests.mjs runs this file on the native client and on
// the WebSocket client): what a handler sees, where retry copies and dead-letter records go, and which keys they
// keep. The contract's names stay the logical topic whatever partition a message came from.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarClient, type PulsarClientLike } from '../../../lib/index.js';
import { type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { createPartitionedTopic, deletePartitionedTopic } from '../../../scripts/lib/scale-run.mjs';
import {
  newClient,
  newWebSocketClient,
  onNative,
  receiveN,
  testClientKind,
  uniqueTopic,
  waitFor,
  webUrl,
} from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:scale:partitioned';
const PARTITIONS = 4;

interface Seen {
  name: string;
  attempt: number;
  topic: string;
  partition: number;
  topicName: string;
  partitionKey: string;
  orderingKey: string;
  queue: string;
}

const seen: Seen[] = [];

@Controller()
class PartitionedHandler {
  @BabelHandler(URN)
  handle(@Payload() data: { name: string; fail?: 'once' | 'always' }, @Ctx() ctx: BabelContext): void {
    const message = ctx.getMessage();
    seen.push({
      name: data.name,
      attempt: ctx.getAttempts(),
      topic: ctx.getTopic(),
      partition: ctx.getPartition(),
      topicName: message.getTopicName(),
      partitionKey: ctx.getPartitionKey(),
      orderingKey: message.getOrderingKey?.() ?? '',
      queue: ctx.getEnvelope().meta.queue,
    });
    if (data.fail === 'always' || (data.fail === 'once' && ctx.getAttempts() === 0)) {
      throw new Error(`${data.name} fails`);
    }
  }
}

let client: PulsarClientLike;
let observerClient: PulsarClientLike;
let service: RunningService;
let publisher: BabelPulsarClient;
let deadLetters: PulsarConsumer;
let topic: string;

beforeAll(async () => {
  topic = uniqueTopic('scale-partitioned');
  await createPartitionedTopic(webUrl(), topic, PARTITIONS);
  client = newClient();
  observerClient = newWebSocketClient();
  deadLetters = await observerClient.subscribe({
    topic: `${topic}.dlq`,
    subscription: 'observer',
    subscriptionType: 'Exclusive',
    subscriptionInitialPosition: 'Earliest',
  });
  service = await startService([PartitionedHandler], {
    client,
    topics: topic,
    subscription: 'partitioned',
    subscriptionInitialPosition: 'Earliest',
    maxAttempts: 2,
  });
  publisher = new BabelPulsarClient({ client, topic });
});

afterAll(async () => {
  await service?.close();
  await publisher?.close();
  await deadLetters?.close();
  await Promise.allSettled([client?.close(), observerClient?.close()]);
  await deletePartitionedTopic(webUrl(), topic);
});

const deliveriesOf = (name: string) => seen.filter((s) => s.name === name);

describe(`partitioned topics (${testClientKind()})`, () => {
  it('consumes every partition; the handler sees the logical topic, meta.queue and the partition', async () => {
    const names = Array.from({ length: 24 }, (_, i) => `order-${i}`);
    await Promise.all(names.map((name) => publisher.publish(URN, { name }, { key: name })));
    await waitFor('every message handled', () => names.every((name) => deliveriesOf(name).length === 1));

    const deliveries = names.map((name) => deliveriesOf(name)[0]!);
    const partitions = new Set(deliveries.map((d) => d.partition));
    console.log(`[scale] ${testClientKind()}: 24 keys over partitions ${[...partitions].sort().join(',')}`);
    expect(partitions.size).toBeGreaterThan(1);
    for (const d of deliveries) {
      expect(d.partition).toBeGreaterThanOrEqual(0);
      expect(d.partition).toBeLessThan(PARTITIONS);
      expect(d.topic).toBe(topic); // as configured: the logical topic
      expect(d.queue).toBe(topic); // meta.queue: the bare logical name, never "…-partition-N"
      expect(d.topicName).toBe(`persistent://public/default/${topic}-partition-${d.partition}`);
      expect(d.partitionKey).toBe(d.name);
    }
  });

  it('puts a key on the same partition whichever client publishes it', async () => {
    const webSocketProducer = await observerClient.createProducer({ topic });
    const keys = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    for (const key of keys) {
      await publisher.publish(URN, { name: `library-${key}` }, { key });
      const envelope = { name: `websocket-${key}` };
      await webSocketProducer.send({
        data: Buffer.from(
          JSON.stringify({
            job: URN,
            trace_id: 't',
            data: envelope,
            meta: { id: `ws-${key}`, queue: topic, lang: 'node', schema_version: 1, created_at: Date.now() },
            attempts: 0,
          }),
        ),
        partitionKey: key,
      });
    }
    await webSocketProducer.close();
    await waitFor('both copies of every key handled', () =>
      keys.every((k) => deliveriesOf(`library-${k}`).length === 1 && deliveriesOf(`websocket-${k}`).length === 1),
    );
    for (const key of keys) {
      expect(deliveriesOf(`library-${key}`)[0]!.partition).toBe(deliveriesOf(`websocket-${key}`)[0]!.partition);
    }
  });

  it('sends a retry copy to its original partition with its partition key', async () => {
    await publisher.publish(URN, { name: 'flaky', fail: 'once' }, { key: 'flaky-key' });
    await waitFor('the retry handled', () => deliveriesOf('flaky').length === 2);
    const [first, retry] = deliveriesOf('flaky');
    expect([first!.attempt, retry!.attempt]).toEqual([0, 1]);
    expect(retry!.partitionKey).toBe('flaky-key');
    expect(retry!.partition).toBe(first!.partition);
    expect(retry!.topic).toBe(topic);
    expect(retry!.queue).toBe(topic);
  });

  it('writes a dead-letter record to <logical topic>.dlq with the partition key and the logical queue', async () => {
    await publisher.publish(URN, { name: 'doomed', fail: 'always' }, { key: 'doomed-key' });
    const [record] = await receiveN(deadLetters, 1);
    const body = JSON.parse(record!.getData().toString()) as { dead_letter: { original_queue: string } };
    expect(record!.getPartitionKey()).toBe('doomed-key');
    expect(record!.getTopicName()).toBe(`persistent://public/default/${topic}.dlq`);
    expect(body.dead_letter.original_queue).toBe(topic);
    expect(record!.getProperties()['bq-dead-letter-original-queue']).toBe(topic);
    expect(deliveriesOf('doomed').map((d) => d.partitionKey)).toEqual(['doomed-key', 'doomed-key']);
  });

  it(
    onNative()
      ? 'keeps the ordering key on a retry copy (native client)'
      : 'refuses an ordering key, which the WebSocket API cannot carry',
    async () => {
      const sending = publisher.publish(
        URN,
        { name: 'ordered', fail: 'once' },
        { key: 'ordered-key', orderingKey: 'ordering-1' },
      );
      if (!onNative()) {
        await expect(sending).rejects.toThrow(/cannot carry an ordering key/);
        await expect(sending).rejects.toBeInstanceOf(Error);
        return;
      }
      await sending;
      await waitFor('the retry handled', () => deliveriesOf('ordered').length === 2);
      const [first, retry] = deliveriesOf('ordered');
      expect(first!.orderingKey).toBe('ordering-1');
      expect(retry!.orderingKey).toBe('ordering-1');
      expect(retry!.partitionKey).toBe('ordered-key');
      expect(retry!.partition).toBe(first!.partition);
    },
  );
});
