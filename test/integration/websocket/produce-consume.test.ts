import { jest } from '@jest/globals';
import {
  PulsarWebSocketClient,
  PulsarWebSocketMessageId,
  type PulsarWebSocketConsumer,
} from '../../../lib/pulsar/websocket/index.js';
import { liveClientFixture, receiveN, rejectionOf } from './support/helpers.js';

jest.setTimeout(30000);

describe('PulsarWebSocketClient: produce and consume (live broker)', () => {
  const live = liveClientFixture();
  const topic = live.topic;
  let client: PulsarWebSocketClient;
  beforeAll(() => {
    client = live.client();
  });

  it('round-trips payload, properties (non-ASCII keys and values), partition key and metadata exactly', async () => {
    const name = topic('props');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub' });
    const producer = await client.createProducer({ topic: name });
    const properties = {
      plain: 'value',
      'ключ-ü': 'значение ✓ — 日本語 🚀',
      'emoji 🔑': 'x',
      empty: '',
      'quote"and\\slash': 'line\nbreak\ttab',
    };
    const before = Date.now();
    const id = await producer.send({ data: Buffer.from('héllo wörld', 'utf8'), properties, partitionKey: 'key-ü' });
    expect(id).toBeInstanceOf(PulsarWebSocketMessageId);
    expect(typeof id.toString()).toBe('string');

    const message = await consumer.receive(10000);
    await consumer.acknowledge(message);
    expect(message.getData().toString('utf8')).toBe('héllo wörld');
    expect(message.getProperties()).toEqual(properties);
    expect(message.getPartitionKey()).toBe('key-ü');
    expect(message.getRedeliveryCount()).toBe(0);
    expect(message.getTopicName()).toBe(`persistent://public/default/${name}`);
    expect(message.getMessageId().toString()).toBe(id.toString());
    const published = message.getPublishTimestamp();
    expect(Number.isInteger(published)).toBe(true);
    expect(published).toBeGreaterThanOrEqual(before - 1000);
    expect(published).toBeLessThanOrEqual(Date.now() + 1000);
    expect(message.getMessageId().ledgerId).toBeGreaterThanOrEqual(0);
    expect(message.getMessageId().entryId).toBe(0);
  });

  it('reports an empty partition key and empty properties when none were sent', async () => {
    const name = topic('nokey');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub' });
    const producer = await client.createProducer({ topic: name });
    await producer.send({ data: Buffer.from('x') });
    const message = await consumer.receive(10000);
    expect(message.getPartitionKey()).toBe('');
    expect(message.getProperties()).toEqual({});
  });

  it('keeps binary payloads byte-exact (all 256 byte values) and delivers an empty payload as an empty Buffer', async () => {
    const name = topic('binary');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub' });
    const producer = await client.createProducer({ topic: name });
    const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const reversed = Buffer.from(allBytes).reverse();
    const invalidUtf8 = Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0x00, 0xed, 0xa0, 0x80]);
    await Promise.all([
      producer.send({ data: allBytes }),
      producer.send({ data: Buffer.alloc(0) }),
      producer.send({ data: reversed }),
      producer.send({ data: invalidUtf8 }),
    ]);
    const received = await receiveN(consumer, 4);
    expect(received[0]!.getData().equals(allBytes)).toBe(true);
    expect(received[1]!.getData().length).toBe(0);
    expect(Buffer.isBuffer(received[1]!.getData())).toBe(true);
    expect(received[2]!.getData().equals(reversed)).toBe(true);
    expect(received[3]!.getData().equals(invalidUtf8)).toBe(true);
  });

  it('accepts short, tenant/namespace/topic and full topic names for the same topic, and non-persistent topics', async () => {
    const name = topic('names');
    const consumer = await client.subscribe({ topic: `persistent://public/default/${name}`, subscription: 'sub' });
    const shortProducer = await client.createProducer({ topic: name });
    const midProducer = await client.createProducer({ topic: `public/default/${name}` });
    expect(shortProducer.getTopic()).toBe(`persistent://public/default/${name}`);
    expect(midProducer.getTopic()).toBe(`persistent://public/default/${name}`);
    await shortProducer.send({ data: Buffer.from('short') });
    await midProducer.send({ data: Buffer.from('mid') });
    const received = await receiveN(consumer, 2);
    expect(received.map((m) => m.getData().toString())).toEqual(['short', 'mid']);

    const np = `non-persistent://public/default/${topic('np')}`;
    const npConsumer = await client.subscribe({ topic: np, subscription: 'sub' });
    const npProducer = await client.createProducer({ topic: np });
    await npProducer.send({ data: Buffer.from('volatile') });
    const message = await npConsumer.receive(10000);
    expect(message.getData().toString()).toBe('volatile');
    expect(message.getTopicName()).toBe(np);
  });

  it('rejects malformed topic names with a clear error before connecting', async () => {
    for (const bad of [
      '',
      'a/b',
      'persistent://public/default',
      'kafka://a/b/c',
      'persistent://a/b/c/d',
      'persistent:///ns/t',
      ' padded',
    ]) {
      const err = await rejectionOf(client.createProducer({ topic: bad }));
      expect(err.name).toBe('PulsarWebSocketError');
      expect(err.code).toBe('InvalidTopic');
      expect(err.message).toContain(JSON.stringify(bad));
      const subErr = await rejectionOf(client.subscribe({ topic: bad, subscription: 's' }));
      expect(subErr.code).toBe('InvalidTopic');
    }
  });

  it('pipelines many sends and correlates every ack to its own send', async () => {
    const name = topic('pipeline');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub' });
    const producer = await client.createProducer({ topic: name });
    const ids = await Promise.all(Array.from({ length: 100 }, (_, i) => producer.send({ data: Buffer.from(`m${i}`) })));
    expect(new Set(ids.map(String)).size).toBe(100);
    const received = await receiveN(consumer, 100);
    expect(received.map((m) => m.getData().toString())).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`));
    // Each ack's id is the id the consumer sees for that message.
    expect(received.map((m) => m.getMessageId().toString())).toEqual(ids.map(String));
    await producer.flush();
  });

  it('honours subscriptionInitialPosition Earliest and maps KeyShared to the broker type', async () => {
    const name = topic('earliest');
    const producer = await client.createProducer({ topic: name });
    await producer.send({ data: Buffer.from('old') });
    const latest = await client.subscribe({ topic: name, subscription: 'latest', subscriptionType: 'Shared' });
    const earliest: PulsarWebSocketConsumer = await client.subscribe({
      topic: name,
      subscription: 'earliest',
      subscriptionType: 'KeyShared',
      subscriptionInitialPosition: 'Earliest',
    });
    const message = await earliest.receive(10000);
    expect(message.getData().toString()).toBe('old');
    await expect(latest.receive(500)).rejects.toThrow('TimeOut');
  });
});
