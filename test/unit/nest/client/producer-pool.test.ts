// BabelProducerPool: one producer per topic (short and full names alike), shared creations, clean closing.
import { BabelProducerPool } from '../../../../lib/index.js';
import { FakeClient } from '../support/fake-client.js';

describe('BabelProducerPool', () => {
  it('shares one producer between a short and a full topic name', async () => {
    const fake = new FakeClient();
    const pool = new BabelProducerPool(fake);
    const [a, b] = await Promise.all([
      pool.producerFor('orders'),
      pool.producerFor('persistent://public/default/orders'),
    ]);
    expect(a).toBe(b);
    expect(fake.createCalls).toBe(1);
    expect(pool.describe()).toEqual([{ topic: 'persistent://public/default/orders', connected: true }]);
  });

  it('reports each producer’s own connection state', async () => {
    const fake = new FakeClient();
    const pool = new BabelProducerPool(fake);
    const producer = await pool.producerFor('orders');
    Object.assign(producer, { isConnected: () => false });
    expect(pool.describe()).toEqual([{ topic: 'persistent://public/default/orders', connected: false }]);
  });

  it('closes every producer once, and refuses new ones afterwards', async () => {
    const fake = new FakeClient();
    const pool = new BabelProducerPool(fake);
    await pool.producerFor('a');
    await pool.producerFor('b');
    await Promise.all([pool.close(), pool.close()]);
    expect(fake.producers.map((p) => p.closed)).toEqual([true, true]);
    expect(pool.closed).toBe(true);
    expect(pool.describe()).toEqual([]);
    await expect(pool.producerFor('a')).rejects.toThrow(/producer pool is closed/);
  });

  it('closes a producer whose creation finishes while the pool is closing', async () => {
    const fake = new FakeClient();
    let open!: () => void;
    fake.gate = new Promise<void>((resolve) => (open = resolve));
    const pool = new BabelProducerPool(fake);
    const pending = pool.producerFor('late');
    const closing = pool.close();
    open();
    await expect(pending).rejects.toThrow(/closed while the producer/);
    await closing;
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.producers[0]!.closed).toBe(true);
  });
});
