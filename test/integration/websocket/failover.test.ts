// The WebSocket client given several web services (`http://a,b`): it connects to one that is up, and when the one
// it uses goes down, its sockets move to the other without losing a message. Two TCP forwarders in front of the
// same broker stand in for two brokers here; test/chaos/cluster-faults.test.ts does it on a real cluster.
import { jest } from '@jest/globals';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { BROKER_URL, receiveN, rejectionOf, topicsDeletedAfterAll, waitFor } from './support/helpers.js';

jest.setTimeout(30000);

describe('PulsarWebSocketClient: several web service URLs (live broker)', () => {
  const brokerPort = Number(new URL(BROKER_URL).port || 80);
  const topic = topicsDeletedAfterAll();
  let first: TcpProxy;
  let second: TcpProxy;
  let client: PulsarWebSocketClient;

  beforeEach(async () => {
    first = new TcpProxy('127.0.0.1', brokerPort);
    second = new TcpProxy('127.0.0.1', brokerPort);
    await first.start();
    await second.start();
    client = new PulsarWebSocketClient({
      serviceUrl: `http://127.0.0.1:${first.port},127.0.0.1:${second.port}`,
      operationTimeoutMs: 5000,
      reconnect: { initialDelayMs: 50, maxDelayMs: 400 },
    });
  });

  afterEach(async () => {
    await client.close();
    await first.stop();
    await second.stop();
  });

  it('connects through the second web service when the first is down', async () => {
    first.pause();
    const name = topic('failover-first-down');
    const consumer = await client.subscribe({ topic: name, subscription: 's', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic: name });
    await producer.send({ data: Buffer.from('one') });
    const [message] = await receiveN(consumer, 1);
    expect(message!.getData().toString()).toBe('one');
    expect(first.connectionCount).toBe(0);
    expect(second.connectionCount).toBe(2);
  });

  it('moves its open sockets to the other web service when the one in use goes down', async () => {
    const name = topic('failover-moves');
    const consumer = await client.subscribe({ topic: name, subscription: 's', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic: name });
    await producer.send({ data: Buffer.from('before') });
    expect(first.connectionCount).toBe(2);
    first.pause();
    first.dropAll();
    // A send written before the socket's loss is noticed would fail as "may or may not have been stored".
    await waitFor(() => second.connectionCount === 2, 10_000, 'both sockets on the second web service');
    await producer.send({ data: Buffer.from('after') });
    const received = await receiveN(consumer, 2);
    expect(received.map((m) => m.getData().toString()).sort()).toEqual(['after', 'before']);
    expect(first.connectionCount).toBe(0);
  });

  it('names every web service it tried when none is up', async () => {
    first.pause();
    second.pause();
    const error = await rejectionOf(client.createProducer({ topic: topic('failover-none') }));
    expect(error.message).toMatch(/on any of its 2 web services/);
    expect(error.message).toContain(`127.0.0.1:${first.port}`);
    expect(error.message).toContain(`127.0.0.1:${second.port}`);
  });
});
