// The broker behaviours the in-memory Pulsar keeps, which settlement depends on.
import { InMemoryPulsar } from '../../../lib/testing/index.js';

const body = (text: string) => ({ data: Buffer.from(text) });

describe('InMemoryPulsar', () => {
  it('gives every subscription its own copy, and a new subscription starts at the end unless Earliest', async () => {
    const pulsar = new InMemoryPulsar();
    const producer = await pulsar.createProducer({ topic: 'orders' });
    await producer.send(body('before'));
    const a = await pulsar.subscribe({ topic: 'orders', subscription: 'a', subscriptionType: 'Shared' });
    const b = await pulsar.subscribe({ topic: 'persistent://public/default/orders', subscription: 'b' });
    const early = await pulsar.subscribe({
      topic: 'orders',
      subscription: 'early',
      subscriptionInitialPosition: 'Earliest',
    });
    await producer.send(body('after'));
    expect((await a.receive(100)).getData().toString()).toBe('after');
    expect((await b.receive(100)).getData().toString()).toBe('after');
    expect((await early.receive(100)).getData().toString()).toBe('before');
    await expect(a.receive(20)).rejects.toThrow(/TimeOut/);
    expect(pulsar.published('orders').map((m) => m.data.toString())).toEqual(['before', 'after']);
    await pulsar.close();
  });

  it('holds a delayed message on a Shared subscription until the clock reaches it, not on an Exclusive one', async () => {
    const pulsar = new InMemoryPulsar();
    const shared = await pulsar.subscribe({ topic: 't', subscription: 's', subscriptionType: 'Shared' });
    const exclusive = await pulsar.subscribe({ topic: 't', subscription: 'x', subscriptionType: 'Exclusive' });
    await (await pulsar.createProducer({ topic: 't' })).send({ ...body('later'), deliverAt: Date.now() + 60_000 });
    expect((await exclusive.receive(100)).getData().toString()).toBe('later');
    await expect(shared.receive(50)).rejects.toThrow(/TimeOut/);
    const waiting = shared.receive(5_000);
    pulsar.advance(60_000);
    expect((await waiting).getData().toString()).toBe('later');
    await pulsar.close();
  });

  it('redelivers a negatively acknowledged message after the redelivery delay, its count + 1', async () => {
    const pulsar = new InMemoryPulsar();
    const consumer = await pulsar.subscribe({
      topic: 't',
      subscription: 's',
      subscriptionType: 'Shared',
      nAckRedeliverTimeoutMs: 30_000,
    });
    await (await pulsar.createProducer({ topic: 't' })).send(body('m'));
    const first = await consumer.receive(100);
    consumer.negativeAcknowledge(first);
    await expect(consumer.receive(30)).rejects.toThrow(/TimeOut/);
    pulsar.advance(30_000);
    const again = await consumer.receive(100);
    expect(again.getRedeliveryCount()).toBe(1);
    expect(again.getMessageId().toString()).toBe(first.getMessageId().toString());
    await consumer.acknowledge(again);
    expect(pulsar.backlog('t', 's')).toBe(0);
    await pulsar.close();
  });

  it('gives what a closed consumer left unacknowledged to the next consumer of the subscription', async () => {
    const pulsar = new InMemoryPulsar();
    const config = { topic: 't', subscription: 's', subscriptionType: 'Shared' as const };
    const first = await pulsar.subscribe(config);
    await (await pulsar.createProducer({ topic: 't' })).send(body('m'));
    await first.receive(100);
    await first.close();
    const second = await pulsar.subscribe(config);
    expect((await second.receive(100)).getData().toString()).toBe('m');
    await pulsar.close();
  });

  it('refuses a second consumer on an Exclusive subscription, as the broker does', async () => {
    const pulsar = new InMemoryPulsar();
    await pulsar.subscribe({ topic: 't', subscription: 's', subscriptionType: 'Exclusive' });
    await expect(pulsar.subscribe({ topic: 't', subscription: 's', subscriptionType: 'Exclusive' })).rejects.toThrow(
      /ConsumerBusy/,
    );
    await pulsar.close();
  });
});
