// BabelPulsarClient on its own against the real broker; every message checked by an independent raw consumer.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy, ClientsModule } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import {
  BabelPulsarClient,
  BabelQueueError,
  PulsarWebSocketClient,
  type PulsarClientLike,
} from '../../../lib/index.js';
import type { PulsarConsumer } from '../../../lib/pulsar/client-types.js';
import {
  envelopeOf,
  expectNothing,
  isClientUnderTest,
  newClient,
  rawClient,
  rawSubscribe,
  receiveOne,
  serviceUrl,
  uniqueTopic,
} from './support/helpers.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:orders:created';

describe('BabelPulsarClient (live broker)', () => {
  let raw: PulsarWebSocketClient;
  let pulsar: PulsarClientLike;
  let client: BabelPulsarClient;
  let topic: string;
  let observer: PulsarConsumer;

  beforeAll(() => {
    raw = rawClient();
    pulsar = newClient();
  });

  afterAll(async () => {
    await raw.close();
    await pulsar.close();
  });

  beforeEach(async () => {
    topic = uniqueTopic('publish');
    observer = await rawSubscribe(raw, topic);
    client = new BabelPulsarClient({ client: pulsar, topic });
  });

  afterEach(async () => {
    await client.close();
    await observer.close();
  });

  it('publishes the encoded envelope with exactly the bq-* properties and resolves to meta.id', async () => {
    const id = await client.publish(URN, { order_id: 1042, total: 99.5 });
    const message = await receiveOne(observer);
    const envelope = envelopeOf(message);
    expect(envelope).toMatchObject({
      job: URN,
      data: { order_id: 1042, total: 99.5 },
      attempts: 0,
      meta: { id, queue: topic, lang: 'node', schema_version: 1 },
    });
    expect({ ...message.getProperties() }).toEqual({
      'bq-job': URN,
      'bq-trace-id': envelope.trace_id,
      'bq-message-id': id,
      'bq-schema-version': '1',
      'bq-source-lang': 'node',
      'bq-attempts': '0',
    });
    // The payload is exactly the canonical encoding.
    expect(Object.keys(JSON.parse(message.getData().toString()))).toEqual([
      'job',
      'trace_id',
      'data',
      'meta',
      'attempts',
    ]);
  });

  it('holds a delayed message back until now + delay, with bq-delay', async () => {
    const delay = 3000;
    const sentAt = Date.now();
    await client.publish(URN, { n: 1 }, { delay });
    await expectNothing(observer, 2000);
    const message = await receiveOne(observer, 15_000);
    const receivedAt = Date.now();
    expect(receivedAt - sentAt).toBeGreaterThanOrEqual(delay - 100);
    expect(receivedAt - sentAt).toBeLessThan(delay + 10_000);
    expect(message.getProperties()['bq-delay']).toBe('3000');
  });

  it('continues a given trace: body trace_id and bq-trace-id both carry it', async () => {
    await client.publish(URN, {}, { traceId: 'trace-7b3f9c2a' });
    const message = await receiveOne(observer);
    expect(envelopeOf(message).trace_id).toBe('trace-7b3f9c2a');
    expect(message.getProperties()['bq-trace-id']).toBe('trace-7b3f9c2a');
  });

  it('carries headers as properties: bq-* win, blank keys and values are dropped', async () => {
    await client.publish(
      URN,
      {},
      {
        traceId: 'trace-real',
        headers: {
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          'bq-trace-id': 'forged',
          ' ': 'x',
          empty: '',
        },
      },
    );
    const properties = (await receiveOne(observer)).getProperties();
    expect(properties.traceparent).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(properties['bq-trace-id']).toBe('trace-real');
    expect(properties).not.toHaveProperty(['empty']);
    expect(properties).not.toHaveProperty([' ']);
  });

  it('sets the partition key', async () => {
    await client.publish(URN, {}, { key: 'customer-42' });
    expect((await receiveOne(observer)).getPartitionKey()).toBe('customer-42');
  });

  it('emit() publishes to the default topic and completes once the broker accepted it', async () => {
    const id = await lastValueFrom(client.emit(URN, { via: 'emit' }));
    const envelope = envelopeOf(await receiveOne(observer));
    expect(envelope).toMatchObject({ job: URN, data: { via: 'emit' }, meta: { id } });
  });

  it('send() publishes a request (bq-reply-to, bq-correlation-id) and, with nobody to answer, times out', async () => {
    await expect(lastValueFrom(client.send(URN, { via: 'send' }, { timeoutMs: 1500 }))).rejects.toMatchObject({
      name: 'RequestTimeoutError',
    });
    const request = await receiveOne(observer);
    expect(envelopeOf(request)).toMatchObject({ job: URN, data: { via: 'send' } });
    const properties = request.getProperties();
    expect(properties['bq-reply-to']).toBe(client.replyTopic);
    expect(properties['bq-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('rejects invalid input with a BabelQueueError before anything is sent', async () => {
    const invalid: Array<() => Promise<string>> = [
      () => client.publish(' ', {}),
      () => client.publish(URN, [1, 2] as never),
      () => client.publish(URN, 'text' as never),
      () => client.publish(URN, {}, { delay: -5 }),
      () => client.publish(URN, {}, { delay: Number.NaN }),
      () => new BabelPulsarClient({ client: pulsar }).publish(URN, {}),
    ];
    for (const attempt of invalid) await expect(attempt()).rejects.toBeInstanceOf(BabelQueueError);
    const marker = await client.publish(URN, { marker: true });
    // The first message the topic ever got is the marker.
    expect(envelopeOf(await receiveOne(observer)).meta.id).toBe(marker);
    await expectNothing(observer, 500);
  });

  it('rejects a publish after close() clearly', async () => {
    await client.publish(URN, {});
    await receiveOne(observer);
    await client.close();
    await expect(client.publish(URN, {})).rejects.toThrow(/BabelPulsarClient is closed/);
    await expectNothing(observer, 500);
  });

  it('connects lazily: a publish before connect() connects first; connect() is optional', async () => {
    const fresh = new BabelPulsarClient({ serviceUrl: serviceUrl(), topic });
    expect(() => fresh.unwrap()).toThrow(/not connected yet/);
    const id = await fresh.publish(URN, { lazy: true });
    expect(isClientUnderTest(fresh.unwrap())).toBe(true);
    expect(envelopeOf(await receiveOne(observer)).meta.id).toBe(id);
    await fresh.close();
    // Its own client is closed with it.
    await expect(fresh.unwrap<PulsarWebSocketClient>().createProducer({ topic })).rejects.toThrow(/closed/i);
  });

  it('publishes to another topic given per call, with meta.queue its bare name', async () => {
    const other = uniqueTopic('other');
    const otherObserver = await rawSubscribe(raw, other);
    try {
      await client.publish(URN, {}, { topic: `persistent://public/default/${other}` });
      expect(envelopeOf(await receiveOne(otherObserver)).meta.queue).toBe(other);
      await expectNothing(observer, 300);
    } finally {
      await otherObserver.close();
    }
  });

  it("works as a ClientsModule customClass (Nest's standard client registration)", async () => {
    @Injectable()
    class Notifier {
      constructor(@Inject('ORDERS') readonly client: ClientProxy) {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        ClientsModule.register([
          { name: 'ORDERS', customClass: BabelPulsarClient, options: { serviceUrl: serviceUrl(), topic } },
        ]),
      ],
      providers: [Notifier],
    }).compile();
    const proxy = moduleRef.get(Notifier).client;
    expect(proxy).toBeInstanceOf(BabelPulsarClient);
    const id = await lastValueFrom(proxy.emit(URN, { via: 'ClientsModule' }));
    expect(envelopeOf(await receiveOne(observer))).toMatchObject({ data: { via: 'ClientsModule' }, meta: { id } });
    await moduleRef.close(); // ClientsModule closes the client on shutdown
    expect((proxy as BabelPulsarClient).closed).toBe(true);
  });
});
