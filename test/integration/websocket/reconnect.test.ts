import { jest } from '@jest/globals';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { BROKER_URL, receiveN, rejectionOf, sleep, topicsDeletedAfterAll, waitFor } from './support/helpers.js';

jest.setTimeout(30000);

/** Every socket goes through a TCP proxy the tests can cut, so reconnects are exercised end to end. */
describe('PulsarWebSocketClient: dropped connections and reconnect (live broker)', () => {
  let proxy: TcpProxy;
  let client: PulsarWebSocketClient;
  let direct: PulsarWebSocketClient;
  const topic = topicsDeletedAfterAll();

  beforeEach(async () => {
    proxy = new TcpProxy('127.0.0.1', Number(new URL(BROKER_URL).port || 80));
    await proxy.start();
    client = new PulsarWebSocketClient({
      serviceUrl: proxy.url,
      operationTimeoutMs: 5000,
      reconnect: { initialDelayMs: 50, maxDelayMs: 400 },
    });
    direct = new PulsarWebSocketClient({ serviceUrl: BROKER_URL });
  });

  afterEach(async () => {
    await client.close();
    await direct.close();
    await proxy.stop();
  });

  it('rejects sends in flight at the drop, then reconnects and sends again', async () => {
    const name = topic('inflight');
    const producer = await client.createProducer({ topic: name });
    await producer.send({ data: Buffer.from('warm-up') });

    const inFlight = producer.send({ data: Buffer.from('in flight') });
    proxy.dropAll(); // before the ack can possibly have been read
    const err = await rejectionOf(inFlight);
    expect(err.code).toBe('ConnectionClosed');
    expect(err.message).toContain(producer.getTopic());
    expect(err.message).toContain('may or may not have been stored');

    await waitFor(() => producer.isConnected(), 10000, 'producer reconnect');
    const id = await producer.send({ data: Buffer.from('after reconnect') });
    expect(id.toString()).not.toBe('');
  });

  it('holds sends made while disconnected and delivers them in order after the reconnect', async () => {
    const name = topic('queued');
    const consumer = await direct.subscribe({ topic: name, subscription: 'sub' });
    const producer = await client.createProducer({ topic: name });
    proxy.pause();
    proxy.dropAll();
    await waitFor(() => !producer.isConnected(), 5000, 'producer to notice the drop');
    const sends = ['q1', 'q2', 'q3'].map((body) => producer.send({ data: Buffer.from(body) }));
    await sleep(600); // several failed reconnect attempts
    expect(producer.isConnected()).toBe(false);
    proxy.resume();
    const ids = await Promise.all(sends);
    expect(ids).toHaveLength(3);
    const received = await receiveN(consumer, 3);
    expect(received.map((m) => m.getData().toString())).toEqual(['q1', 'q2', 'q3']);
  });

  it('fails a send that waits for a reconnect longer than sendTimeoutMs, naming the outage', async () => {
    const producer = await client.createProducer({ topic: topic('outage'), sendTimeoutMs: 500 });
    proxy.pause();
    proxy.dropAll();
    await waitFor(() => !producer.isConnected(), 5000, 'producer to notice the drop');
    const err = await rejectionOf(producer.send({ data: Buffer.from('too late') }));
    expect(err.code).toBe('SendTimeout');
    expect(err.message).toContain('not connected');
    proxy.resume();
    await waitFor(() => producer.isConnected(), 10000, 'producer reconnect');
  });

  it('keeps a pending receive() waiting across a reconnect', async () => {
    const name = topic('pending-receive');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await direct.createProducer({ topic: name });
    const pending = consumer.receive(20000);
    proxy.dropAll();
    await waitFor(() => consumer.getStats().reconnects >= 1 && consumer.isConnected(), 10000, 'consumer reconnect');
    await producer.send({ data: Buffer.from('after the drop') });
    const message = await pending;
    expect(message.getData().toString()).toBe('after the drop');
    await consumer.acknowledge(message);
  });

  it('gets unacked messages back after a drop; acking a pre-drop message afterwards is safe and not redelivered', async () => {
    const name = topic('redeliver');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub' });
    const producer = await direct.createProducer({ topic: name });
    for (const body of ['m1', 'm2', 'm3']) await producer.send({ data: Buffer.from(body) });
    const [m1, m2] = await receiveN(consumer, 2, { ack: false });

    proxy.dropAll();
    await waitFor(() => !consumer.isConnected(), 5000, 'consumer to notice the drop');
    // Acking while disconnected does not throw (remembered and applied to the redelivered copy).
    await expect(consumer.acknowledge(m1!)).resolves.toBeNull();
    expect(() => consumer.negativeAcknowledge(m2!)).not.toThrow();
    await waitFor(() => consumer.isConnected(), 10000, 'consumer reconnect');

    const rest = await receiveN(consumer, 2);
    expect(rest.map((m) => m.getData().toString())).toEqual(['m2', 'm3']);
    expect(rest[0]!.getMessageId().toString()).toBe(m2!.getMessageId().toString());
    await expect(consumer.receive(800)).rejects.toThrow('TimeOut');

    // Everything is acknowledged on the broker: a fresh consumer on the subscription gets nothing.
    await consumer.close();
    await sleep(300);
    const fresh = await direct.subscribe({ topic: name, subscription: 'sub' });
    await expect(fresh.receive(800)).rejects.toThrow('TimeOut');
  });

  it('retries with backoff while the broker is unreachable and recovers when it is back', async () => {
    const name = topic('backoff');
    const consumer = await client.subscribe({ topic: name, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic: name });
    proxy.pause();
    proxy.dropAll();
    await sleep(1000);
    expect(consumer.isConnected()).toBe(false);
    expect(producer.isConnected()).toBe(false);
    proxy.resume();
    await waitFor(() => consumer.isConnected() && producer.isConnected(), 10000, 'both to reconnect');
    expect(consumer.getStats().reconnects).toBe(1);
    await producer.send({ data: Buffer.from('recovered') });
    const message = await consumer.receive(10000);
    expect(message.getData().toString()).toBe('recovered');
  });
});
