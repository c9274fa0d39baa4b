import { jest } from '@jest/globals';
import {
  PulsarWebSocketClient,
  type PulsarWebSocketConsumer,
  type PulsarWebSocketMessage,
} from '../../../lib/pulsar/websocket/index.js';
import { liveClientFixture, receiveN, sleep, waitFor, withTimeout } from './support/helpers.js';

jest.setTimeout(30000);

describe('PulsarWebSocketClient: redelivery, delay, sharing and flow control (live broker)', () => {
  const live = liveClientFixture();
  const topic = live.topic;
  let client: PulsarWebSocketClient;
  beforeAll(() => {
    client = live.client();
  });

  it('negativeAcknowledge on a Shared subscription redelivers with an incremented redelivery count', async () => {
    const name = topic('nack');
    const consumer = await client.subscribe({
      topic: name,
      subscription: 'sub',
      subscriptionType: 'Shared',
      nAckRedeliverTimeoutMs: 200,
    });
    const producer = await client.createProducer({ topic: name });
    const id = await producer.send({ data: Buffer.from('retry me'), properties: { attempt: 'x' } });

    const counts: number[] = [];
    for (let round = 0; round < 3; round++) {
      const message = await consumer.receive(10000);
      expect(message.getMessageId().toString()).toBe(id.toString());
      expect(message.getData().toString()).toBe('retry me');
      expect(message.getProperties()).toEqual({ attempt: 'x' });
      counts.push(message.getRedeliveryCount());
      if (round < 2) consumer.negativeAcknowledge(message);
      else await consumer.acknowledge(message);
    }
    expect(counts).toEqual([0, 1, 2]);
    // Acked: it does not come back.
    await expect(consumer.receive(1000)).rejects.toThrow('TimeOut');
  });

  it('holds deliverAt / deliverAfter messages back until their time on a Shared subscription', async () => {
    const name = topic('delay');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic: name });
    const start = Date.now();
    const afterTarget = start + 1200;
    const atTarget = start + 1800;
    await Promise.all([
      producer.send({ data: Buffer.from('after'), deliverAfter: 1200 }),
      producer.send({ data: Buffer.from('at'), deliverAt: atTarget }),
      producer.send({ data: Buffer.from('now') }),
    ]);

    const receivedAt: Record<string, number> = {};
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const message = await consumer.receive(10000);
      const body = message.getData().toString();
      receivedAt[body] = Date.now();
      order.push(body);
      await consumer.acknowledge(message);
    }
    expect(order).toEqual(['now', 'after', 'at']);
    expect(receivedAt.now! - start).toBeLessThan(afterTarget - start);
    expect(receivedAt.after!).toBeGreaterThanOrEqual(afterTarget - 50);
    expect(receivedAt.at!).toBeGreaterThanOrEqual(atTarget - 50);
    // Generous upper bound: delayed delivery is not lost or stuck.
    expect(receivedAt.at! - atTarget).toBeLessThan(8000);
  });

  it('splits a Shared subscription between two consumers with nothing lost or duplicated', async () => {
    const name = topic('shared');
    const options = { topic: name, subscription: 'sub', subscriptionType: 'Shared' as const, receiverQueueSize: 10 };
    const [a, b] = await Promise.all([client.subscribe(options), client.subscribe(options)]);
    const producer = await client.createProducer({ topic: name });
    const total = 200;
    await Promise.all(Array.from({ length: total }, (_, i) => producer.send({ data: Buffer.from(`m${i}`) })));

    const seen: string[] = [];
    const perConsumer = new Map<PulsarWebSocketConsumer, number>([
      [a, 0],
      [b, 0],
    ]);
    const drain = async (consumer: PulsarWebSocketConsumer): Promise<void> => {
      while (seen.length < total) {
        let message: PulsarWebSocketMessage;
        try {
          message = await consumer.receive(500);
        } catch (err) {
          if ((err as { code?: string }).code === 'TimeOut') continue;
          throw err;
        }
        seen.push(message.getData().toString());
        perConsumer.set(consumer, perConsumer.get(consumer)! + 1);
        await consumer.acknowledge(message);
        await sleep(1); // let the other consumer get a share
      }
    };
    await withTimeout(Promise.all([drain(a), drain(b)]), 20000, () => `only ${seen.length}/${total} messages arrived`);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect(perConsumer.get(a)!).toBeGreaterThan(0);
    expect(perConsumer.get(b)!).toBeGreaterThan(0);
    // Nothing left over for either consumer.
    await expect(a.receive(300)).rejects.toThrow('TimeOut');
    await expect(b.receive(300)).rejects.toThrow('TimeOut');
  });

  it('gives unacknowledged messages to the next consumer after a consumer disconnects without acking', async () => {
    const name = topic('unacked');
    const first = await client.subscribe({ topic: name, subscription: 'sub' });
    const producer = await client.createProducer({ topic: name });
    const ids = await Promise.all([0, 1, 2, 3, 4].map((i) => producer.send({ data: Buffer.from(`m${i}`) })));
    const received = await receiveN(first, 5, { ack: false });
    expect(received.map((m) => m.getMessageId().toString())).toEqual(ids.map(String));
    await first.close();

    const second = await client.subscribe({ topic: name, subscription: 'sub' });
    const again = await receiveN(second, 5);
    expect(again.map((m) => m.getMessageId().toString())).toEqual(ids.map(String));
    expect(again.map((m) => m.getData().toString())).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  });

  it('never holds more than receiverQueueSize unacknowledged messages, however large the backlog', async () => {
    const name = topic('flow');
    const producer = await client.createProducer({ topic: name });
    // Create the subscription at the start of the topic, then build a 300-message backlog.
    await (await client.subscribe({ topic: name, subscription: 'sub', subscriptionType: 'Shared' })).close();
    await Promise.all(Array.from({ length: 300 }, (_, i) => producer.send({ data: Buffer.from(`m${i}`) })));

    const consumer = await client.subscribe({
      topic: name,
      subscription: 'sub',
      subscriptionType: 'Shared',
      receiverQueueSize: 10,
    });
    const held = (): number => consumer.getStats().buffered + consumer.getStats().unacked;
    await waitFor(() => consumer.getStats().buffered === 10, 10000, '10 buffered messages');
    await sleep(1000); // give the broker every chance to push more than it should
    expect(consumer.getStats()).toMatchObject({ buffered: 10, unacked: 0, bound: 10 });

    // Take all ten without acking: nothing more arrives.
    const inHand = await receiveN(consumer, 10, { ack: false });
    expect(held()).toBe(10);
    await expect(consumer.receive(700)).rejects.toThrow('TimeOut');
    expect(held()).toBe(10);

    // Three acks and two nacks free exactly five slots.
    for (const message of inHand.slice(0, 3)) await consumer.acknowledge(message);
    for (const message of inHand.slice(3, 5)) consumer.negativeAcknowledge(message);
    await waitFor(() => consumer.getStats().buffered === 5, 10000, '5 new messages');
    await sleep(500);
    expect(consumer.getStats()).toMatchObject({ buffered: 5, unacked: 5 });
    expect(held()).toBeLessThanOrEqual(10);
  });
});
