// BabelPulsarClient against a fake client: the message it builds, validation, producer reuse and closing.
import 'reflect-metadata';
import { lastValueFrom } from 'rxjs';
import { BabelPulsarClient, BabelQueueError, EnvelopeCodec } from '../../../../lib/index.js';
import { FakeClient } from '../support/fake-client.js';

const URN = 'urn:babel:orders:created';

function setup(topic: string | null = 'orders') {
  const fake = new FakeClient();
  const client = new BabelPulsarClient({ client: fake, ...(topic !== null && { topic }) });
  return { fake, client };
}

describe('BabelPulsarClient.publish', () => {
  it('sends the encoded envelope with the bq-* projection and resolves to meta.id', async () => {
    const { fake, client } = setup('persistent://public/default/orders');
    const id = await client.publish(URN, { order_id: 7 });
    const [sent] = fake.producers[0]!.sent;
    const { envelope } = EnvelopeCodec.decode(sent!.data);
    expect(envelope).toMatchObject({
      job: URN,
      data: { order_id: 7 },
      attempts: 0,
      meta: { id, queue: 'orders', lang: 'node', schema_version: 1 },
    });
    expect(sent!.properties).toEqual({
      'bq-job': URN,
      'bq-trace-id': envelope.trace_id,
      'bq-message-id': id,
      'bq-schema-version': '1',
      'bq-source-lang': 'node',
      'bq-attempts': '0',
    });
    expect(sent!.deliverAt).toBeUndefined();
    expect(sent!.partitionKey).toBeUndefined();
  });

  it('continues a trace, sets the key and publishes to another topic', async () => {
    const { fake, client } = setup();
    await client.publish(URN, {}, { topic: 'tenant/ns/invoices', traceId: 'trace-1', key: 'customer-9' });
    const producer = fake.producers[0]!;
    expect(producer.getTopic()).toBe('tenant/ns/invoices');
    const [sent] = producer.sent;
    expect(EnvelopeCodec.decode(sent!.data).envelope).toMatchObject({
      trace_id: 'trace-1',
      meta: { queue: 'invoices' },
    });
    expect(sent!.properties!['bq-trace-id']).toBe('trace-1');
    expect(sent!.partitionKey).toBe('customer-9');
  });

  it('sets deliverAt = now + delay and bq-delay in whole ms', async () => {
    const { fake, client } = setup();
    const before = Date.now();
    await client.publish(URN, {}, { delay: 1500.2 });
    const after = Date.now();
    const [sent] = fake.producers[0]!.sent;
    expect(sent!.properties!['bq-delay']).toBe('1501');
    expect(sent!.deliverAt).toBeGreaterThanOrEqual(before + 1501);
    expect(sent!.deliverAt).toBeLessThanOrEqual(after + 1501);
    expect(sent!.deliverAfter).toBeUndefined();
  });

  it('sets neither deliverAt nor bq-delay for a zero delay', async () => {
    const { fake, client } = setup();
    await client.publish(URN, {}, { delay: 0, headers: { 'bq-delay': '999' } });
    const [sent] = fake.producers[0]!.sent;
    expect(sent!.deliverAt).toBeUndefined();
    expect(sent!.properties!['bq-delay']).toBeUndefined();
  });

  it('carries headers: blanks dropped, bq-* properties win', async () => {
    const { fake, client } = setup();
    await client.publish(
      URN,
      {},
      {
        traceId: 'real-trace',
        headers: {
          traceparent: '00-abc-def-01',
          'bq-trace-id': 'forged',
          'bq-job': 'urn:forged',
          'bq-replay-bypass': 'true',
          '': 'blank key',
          ' \t': 'whitespace key',
          empty: '',
          spaces: ' \n ',
          missing: undefined,
        },
      },
    );
    const properties = fake.producers[0]!.sent[0]!.properties!;
    expect(properties).toMatchObject({
      traceparent: '00-abc-def-01',
      'bq-trace-id': 'real-trace',
      'bq-job': URN,
      'bq-replay-bypass': 'true',
    });
    for (const dropped of ['', ' \t', 'empty', 'spaces', 'missing']) expect(properties).not.toHaveProperty([dropped]);
  });

  it.each([
    ['a blank URN', () => [' ', {}]],
    ['a non-string URN', () => [42, {}]],
    ['an array as data', () => [URN, [1]]],
    ['a string as data', () => [URN, 'x']],
    ['null data', () => [URN, null]],
    ['no data', () => [URN, undefined]],
    ['a Date as data', () => [URN, new Date()]],
    ['a Map as data', () => [URN, new Map()]],
    ['a negative delay', () => [URN, {}, { delay: -1 }]],
    ['an infinite delay', () => [URN, {}, { delay: Infinity }]],
    ['a NaN delay', () => [URN, {}, { delay: NaN }]],
    ['a string delay', () => [URN, {}, { delay: '10' }]],
    ['a blank topic', () => [URN, {}, { topic: ' ' }]],
    ['a malformed topic', () => [URN, {}, { topic: 'ftp://x/y/z' }]],
    ['a non-string header', () => [URN, {}, { headers: { n: 1 } }]],
    ['a non-string trace id', () => [URN, {}, { traceId: 5 }]],
    ['a non-string key', () => [URN, {}, { key: 5 }]],
    [
      'a bigint-free cycle',
      () => {
        const data: Record<string, unknown> = {};
        data.self = data;
        return [URN, data];
      },
    ],
  ])('rejects %s with a BabelQueueError before sending', async (_name, args) => {
    const { fake, client } = setup();
    const publish = client.publish.bind(client) as (...a: unknown[]) => Promise<string>;
    await expect(publish(...args())).rejects.toBeInstanceOf(BabelQueueError);
    expect(fake.createCalls).toBe(0);
  });

  it('rejects when there is neither a topic option nor a default topic', async () => {
    const { fake, client } = setup(null);
    await expect(client.publish(URN, {})).rejects.toThrow(/needs a topic/);
    expect(fake.createCalls).toBe(0);
  });

  it('accepts a DTO class instance as data (its own properties are sent)', async () => {
    class OrderDto {
      constructor(readonly order_id: number) {}
    }
    const { fake, client } = setup();
    await client.publish(URN, new OrderDto(3));
    expect(EnvelopeCodec.decode(fake.producers[0]!.sent[0]!.data).envelope).toMatchObject({ data: { order_id: 3 } });
  });

  it('creates one producer per topic, shared by concurrent first publishes', async () => {
    const { fake, client } = setup();
    let open!: () => void;
    fake.gate = new Promise<void>((resolve) => (open = resolve));
    const publishes = [
      client.publish(URN, { n: 1 }),
      client.publish(URN, { n: 2 }),
      client.publish(URN, { n: 3 }, { topic: 'persistent://public/default/orders' }),
      client.publish(URN, { n: 4 }, { topic: 'invoices' }),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    open();
    await Promise.all(publishes);
    expect(fake.createCalls).toBe(2);
    expect(fake.producers.map((p) => p.sent.length)).toEqual([3, 1]);
    await client.publish(URN, { n: 5 });
    expect(fake.createCalls).toBe(2);
  });

  it('forgets a failed producer creation so that the next publish retries', async () => {
    const { fake, client } = setup();
    fake.failCreateWith = new Error('broker down');
    await expect(client.publish(URN, {})).rejects.toThrow('broker down');
    fake.failCreateWith = null;
    await expect(client.publish(URN, {})).resolves.toEqual(expect.any(String));
    expect(fake.createCalls).toBe(2);
  });

  it('reports a send the broker refused through the rejection and the error event', async () => {
    const { fake, client } = setup();
    await client.connect();
    fake.producers[0]!.failWith = new Error('SendError');
    const errors: Error[] = [];
    client.on('error', (error) => errors.push(error));
    await expect(client.publish(URN, {})).rejects.toThrow('SendError');
    expect(errors.map((e) => e.message)).toEqual(['SendError']);
  });
});

describe('BabelPulsarClient as a ClientProxy', () => {
  it('emit() publishes to the default topic and emits the message id', async () => {
    const { fake, client } = setup();
    const id = await lastValueFrom(client.emit(URN, { a: 1 }));
    const [sent] = fake.producers[0]!.sent;
    expect(EnvelopeCodec.decode(sent!.data).envelope).toMatchObject({ job: URN, data: { a: 1 }, meta: { id } });
  });

  it('emit() publishes even when nobody subscribes (hot, like every Nest client)', async () => {
    const { fake, client } = setup();
    client.emit(URN, { a: 1 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.producers[0]?.sent).toHaveLength(1);
  });

  it('emit() carries dispatch-hook metadata as properties', async () => {
    const { fake, client } = setup();
    client.setOnDispatchHook((packet) => {
      packet.metadata = { tenant: 'acme', 'bq-job': 'forged' };
    });
    await lastValueFrom(client.emit(URN, {}));
    expect(fake.producers[0]!.sent[0]!.properties).toMatchObject({ tenant: 'acme', 'bq-job': URN });
  });

  it('emit() rejects a non-string pattern', async () => {
    const { fake, client } = setup();
    await expect(lastValueFrom(client.emit({ cmd: 'x' }, {}))).rejects.toThrow(/URN string/);
    expect(fake.producers.flatMap((p) => p.sent)).toEqual([]);
  });

  it('send() refuses a bad pattern or time-out before anything is sent; a reply topic it cannot read is its error', async () => {
    const { fake, client } = setup();
    await expect(lastValueFrom(client.send({ cmd: 'x' }, {}))).rejects.toThrow(/URN string \(or a contract\)/);
    await expect(lastValueFrom(client.send(URN, {}, { timeoutMs: 0 }))).rejects.toThrow(
      /timeoutMs of send\(\) must be above 0/,
    );
    expect(fake.createCalls).toBe(0);
    // Request/response itself is tested on the kit and the broker (test/support/request-reply-scenario.ts).
    await expect(lastValueFrom(client.send(URN, {}))).rejects.toThrow(/does not consume/);
    expect(fake.producers.flatMap((p) => p.sent)).toEqual([]);
  });

  it('connect() creates the default topic producer; unwrap() returns the Pulsar client', async () => {
    const { fake, client } = setup();
    await expect(client.connect()).resolves.toBe(fake);
    expect(fake.journal).toEqual(['create:orders']);
    expect(client.unwrap()).toBe(fake);
  });
});

describe('BabelPulsarClient.close', () => {
  it('closes its own producers but never a client it was given; publishing afterwards rejects', async () => {
    const { fake, client } = setup();
    await client.publish(URN, {});
    await client.close();
    await client.close();
    expect(fake.producers[0]!.closed).toBe(true);
    expect(fake.closed).toBe(false);
    expect(client.closed).toBe(true);
    await expect(client.publish(URN, {})).rejects.toThrow(/closed/);
    await expect(lastValueFrom(client.emit(URN, {}))).rejects.toThrow(/closed/);
  });

  it('lets publishes under way finish before closing the producers', async () => {
    const { fake, client } = setup();
    let open!: () => void;
    fake.gate = new Promise<void>((resolve) => (open = resolve));
    const publishing = client.publish(URN, {});
    const closing = client.close();
    open();
    await expect(publishing).resolves.toEqual(expect.any(String));
    await closing;
    expect(fake.producers[0]!.sent).toHaveLength(1);
    expect(fake.producers[0]!.closed).toBe(true);
  });

  it('leaves producers from a shared source open', async () => {
    const fake = new FakeClient();
    const { BabelProducerPool } = await import('../../../../lib/index.js');
    const pool = new BabelProducerPool(fake);
    const client = new BabelPulsarClient({ client: fake, topic: 'orders', producers: pool });
    await client.publish(URN, {});
    await client.close();
    expect(fake.producers[0]!.closed).toBe(false);
    await pool.close();
    expect(fake.producers[0]!.closed).toBe(true);
  });

  it('validates its options', () => {
    const fake = new FakeClient();
    expect(() => new BabelPulsarClient({})).toThrow(/client .* or a serviceUrl/);
    expect(() => new BabelPulsarClient({ client: fake, serviceUrl: 'http://x' })).toThrow(
      /either client or serviceUrl/,
    );
    expect(() => new BabelPulsarClient({ client: {} as never })).toThrow(/options.client must be a Pulsar client/);
    expect(() => new BabelPulsarClient({ client: fake, topic: ' ' })).toThrow(/options.topic/);
  });
});
