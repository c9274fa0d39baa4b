import { jest } from '@jest/globals';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { adminRequest, BROKER_URL, rejectionOf, sleep, topicsDeletedAfterAll, waitFor } from './support/helpers.js';

jest.setTimeout(30000);

function activeResources(kind: string): number {
  return process.getActiveResourcesInfo().filter((name) => name === kind).length;
}

describe('PulsarWebSocketClient: close, unsubscribe and resource hygiene (live broker)', () => {
  const topic = topicsDeletedAfterAll();

  it('close() is idempotent and every operation afterwards rejects clearly', async () => {
    const client = new PulsarWebSocketClient({ serviceUrl: BROKER_URL });
    const name = topic('closed');
    const producer = await client.createProducer({ topic: name });
    const consumer = await client.subscribe({ topic: name, subscription: 'sub' });
    await producer.send({ data: Buffer.from('one') });
    const message = await consumer.receive(10000);

    const pendingReceive = rejectionOf(consumer.receive());
    await Promise.all([producer.close(), producer.close(), consumer.close(), consumer.close()]);
    await expect(producer.close()).resolves.toBeNull();
    await expect(consumer.close()).resolves.toBeNull();
    expect(producer.isConnected()).toBe(false);
    expect(consumer.isConnected()).toBe(false);

    const receiveErr = await pendingReceive;
    expect(receiveErr.code).toBe('AlreadyClosed');
    expect(receiveErr.message).toContain('AlreadyClosed');

    for (const op of [
      () => producer.send({ data: Buffer.from('late') }),
      () => producer.flush(),
      () => consumer.receive(100),
      () => consumer.acknowledge(message),
      () => consumer.unsubscribe(),
    ]) {
      const err = await rejectionOf(op());
      expect(err.code).toBe('AlreadyClosed');
      expect(err.message).toContain(name);
    }
    expect(() => consumer.negativeAcknowledge(message)).not.toThrow();

    await Promise.all([client.close(), client.close()]);
    const createErr = await rejectionOf(client.createProducer({ topic: name }));
    expect(createErr.code).toBe('AlreadyClosed');
    expect((await rejectionOf(client.subscribe({ topic: name, subscription: 's' }))).code).toBe('AlreadyClosed');
  });

  it('client.close() closes every producer and consumer it created and waits for in-flight sends', async () => {
    const client = new PulsarWebSocketClient({ serviceUrl: BROKER_URL });
    const name = topic('client-close');
    const producers = await Promise.all([1, 2].map(() => client.createProducer({ topic: name })));
    const consumers = await Promise.all(
      [1, 2].map(() => client.subscribe({ topic: name, subscription: 'sub', subscriptionType: 'Shared' })),
    );
    const sends = Array.from({ length: 20 }, (_, i) => producers[i % 2]!.send({ data: Buffer.from(`m${i}`) }));
    const flushed = producers[0]!.flush();
    await client.close();
    // Sends that were already written were acknowledged before the sockets closed.
    const results = await Promise.allSettled(sends);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    await expect(flushed).resolves.toBeNull();
    for (const handle of [...producers, ...consumers]) expect(handle.isConnected()).toBe(false);
  });

  it('unsubscribe() deletes the subscription; it is refused while another consumer is attached', async () => {
    const client = new PulsarWebSocketClient({
      serviceUrl: BROKER_URL,
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
    try {
      const name = topic('unsub');
      const path = `persistent/public/default/${name}/subscriptions`;
      const options = { topic: name, subscription: 'to-delete', subscriptionType: 'Shared' as const };
      const a = await client.subscribe(options);
      const b = await client.subscribe(options);

      const refused = await rejectionOf(a.unsubscribe());
      expect(refused.code).toBe('UnsubscribeFailed');
      expect(refused.message).toContain(name);
      // `a` reconnects and keeps working.
      await waitFor(() => a.isConnected(), 10000, 'consumer to reconnect after refused unsubscribe');
      expect(JSON.parse((await adminRequest('GET', path)).text)).toContain('to-delete');

      await b.close();
      await sleep(200);
      await expect(a.unsubscribe()).resolves.toBeNull();
      expect(a.isConnected()).toBe(false);
      expect(JSON.parse((await adminRequest('GET', path)).text)).not.toContain('to-delete');
    } finally {
      await client.close();
    }
  });

  it('leaves no sockets or timers behind after close()', async () => {
    await sleep(200); // let sockets of earlier tests finish closing
    const sockets = activeResources('TCPSocketWrap');
    const timers = activeResources('Timeout');

    const client = new PulsarWebSocketClient({ serviceUrl: BROKER_URL, keepAliveIntervalMs: 1000 });
    const name = topic('handles');
    const producer = await client.createProducer({ topic: name, sendTimeoutMs: 5000 });
    const consumer = await client.subscribe({ topic: name, subscription: 'sub', subscriptionType: 'Shared' });
    await producer.send({ data: Buffer.from('x') });
    await consumer.acknowledge(await consumer.receive(5000));
    const waiting = consumer.receive(60000).catch((err: Error) => err);
    expect(activeResources('TCPSocketWrap')).toBeGreaterThan(sockets);

    await client.close();
    expect((await waiting) as Error).toHaveProperty('code', 'AlreadyClosed');
    await waitFor(() => activeResources('TCPSocketWrap') <= sockets, 5000, 'sockets to be released');
    // ws clears its close-handshake timer on the socket's 'close' event, a moment after the handle goes.
    await waitFor(() => activeResources('Timeout') <= timers, 5000, 'timers to be cleared');
  });
});
