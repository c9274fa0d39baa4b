// The behaviours the contract fixes, proven on the client under test (scripts/run-tests.mjs runs this file once
// on the native pulsar-client and once on the WebSocket client): whatever differs between the two is a bug.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import net from 'node:net';
import {
  BabelContext,
  BabelHandler,
  BabelPulsarClient,
  BabelQueueError,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { createPulsarClient } from '../../../lib/pulsar/index.js';
import { toLibraryClient } from '../../../lib/pulsar/library-client.js';
import {
  newClient,
  newWebSocketClient,
  onNative,
  receiveN,
  serviceUrl,
  sleep,
  testClientKind,
  uniqueTopic,
  waitFor,
} from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:parity:checked';
let raw: PulsarClientLike;
/** The client under test as the library calls it (the native one behind its adapter). */
let client: PulsarClientLike;
let service: RunningService | null = null;

beforeAll(() => {
  raw = newClient();
  client = toLibraryClient(raw);
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await raw.close();
});

/** A port nothing listens on. */
const deadPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe(`client parity (${testClientKind()})`, () => {
  it('counts redeliveries after a negative acknowledgement (getRedeliveryCount 0, then 1)', async () => {
    const topic = uniqueTopic('parity-nack');
    const consumer = await client.subscribe({
      topic,
      subscription: 'parity',
      subscriptionType: 'Shared',
      nAckRedeliverTimeoutMs: 200,
    });
    const producer = await client.createProducer({ topic });
    await producer.send({ data: Buffer.from('once'), properties: { k: 'v' } });
    const first = await consumer.receive(10_000);
    expect(first.getRedeliveryCount()).toBe(0);
    consumer.negativeAcknowledge(first);
    const again = await consumer.receive(10_000);
    expect(again.getRedeliveryCount()).toBe(1);
    expect(again.getData().toString()).toBe('once');
    await consumer.acknowledge(again);
    await Promise.all([producer.close(), consumer.close()]);
  });

  it('gives plain-object property maps, the publish time in epoch ms and the full topic name', async () => {
    const topic = uniqueTopic('parity-props');
    const consumer = await client.subscribe({ topic, subscription: 'parity', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic });
    const before = Date.now();
    await producer.send({ data: Buffer.from('x'), properties: { 'bq-job': URN, 'x-ünï': 'çödé ☕' } });
    const [message] = await receiveN(consumer, 1);
    const properties = message!.getProperties();
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    expect(properties).toEqual({ 'bq-job': URN, 'x-ünï': 'çödé ☕' });
    expect(JSON.parse(JSON.stringify(properties))).toEqual(properties);
    expect(Number.isInteger(message!.getPublishTimestamp())).toBe(true);
    expect(Math.abs(message!.getPublishTimestamp() - before)).toBeLessThan(30_000);
    expect(message!.getTopicName()).toBe(`persistent://public/default/${topic}`);
    expect(message!.getPartitionKey()).toBe('');
    await Promise.all([producer.close(), consumer.close()]);
  });

  it('rejects a receive that times out with an Error that says so, and keeps the consumer usable', async () => {
    const topic = uniqueTopic('parity-timeout');
    const consumer = await client.subscribe({ topic, subscription: 'parity', subscriptionType: 'Shared' });
    const started = Date.now();
    const failure = await consumer.receive(300).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).message)).toMatch(/timeout/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    const producer = await client.createProducer({ topic });
    await producer.send({ data: Buffer.from('after') });
    expect((await consumer.receive(10_000)).getData().toString()).toBe('after');
    await Promise.all([producer.close(), consumer.close()]);
  });

  it('closes a consumer with a receive in flight at once; the receive rejects', async () => {
    const topic = uniqueTopic('parity-close');
    const consumer = await client.subscribe({ topic, subscription: 'parity', subscriptionType: 'Shared' });
    const pending = consumer.receive(30_000).then(
      () => 'received',
      (error: unknown) => (error instanceof Error ? 'rejected' : 'rejected with a non-Error'),
    );
    await sleep(100);
    const started = Date.now();
    await consumer.close();
    expect(await Promise.race([pending, sleep(5_000).then(() => 'still pending')])).toBe('rejected');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('delays a message published with a delay (deliverAt + bq-delay) and reports message ids in one form', async () => {
    const topic = uniqueTopic('parity-delay');
    const handled: Array<{ at: number; delay: string | undefined }> = [];
    @Controller()
    class Delayed {
      @BabelHandler(URN)
      checked(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        handled.push({ at: Date.now(), delay: ctx.getProperties()['bq-delay'] });
      }
    }
    service = await startService([Delayed], { client: raw, topics: topic });
    const publisher = new BabelPulsarClient({ client: raw, topic });
    const sentAt = Date.now();
    await publisher.publish(URN, { n: 1 }, { delay: 1500 });
    await waitFor('the delayed message', () => handled.length === 1, 20_000);
    expect(handled[0]!.at - sentAt).toBeGreaterThanOrEqual(1400);
    expect(handled[0]!.delay).toBe('1500');
    await waitFor('the settlement', () => service!.settled.length === 1);
    expect(service.settled[0]!.messageId).toMatch(/^\(\d+,\d+,-?\d+,-?\d+\)$/);
    await publisher.close();
  });

  it('redelivers by negative acknowledgement with retry: "nack", counting attempts from the redelivery count', async () => {
    const topic = uniqueTopic('parity-retry-nack');
    const attempts: number[] = [];
    @Controller()
    class Failing {
      @BabelHandler(URN)
      checked(@Ctx() ctx: BabelContext) {
        attempts.push(ctx.getAttempts());
        throw new Error('still failing');
      }
    }
    const dlq = await newWebSocketClient().subscribe({
      topic: `${topic}.dlq`,
      subscription: 'check',
      subscriptionType: 'Shared',
    });
    service = await startService([Failing], {
      client: raw,
      topics: topic,
      retry: 'nack',
      maxAttempts: 3,
      nackRedeliverTimeoutMs: 200,
    });
    const publisher = new BabelPulsarClient({ client: raw, topic });
    await publisher.publish(URN, { n: 1 });
    const [record] = await receiveN(dlq, 1, 30_000);
    expect(attempts).toEqual([0, 1, 2]);
    expect(JSON.parse(record!.getData().toString()).dead_letter).toMatchObject({ reason: 'failed', attempts: 3 });
    await publisher.close();
    await dlq.close();
  });

  it('shuts a server down promptly while its receive waits on an empty topic', async () => {
    const topic = uniqueTopic('parity-shutdown');
    @Controller()
    class Idle {
      @BabelHandler(URN)
      checked() {}
    }
    service = await startService([Idle], { client: raw, topics: topic });
    await sleep(300);
    const started = Date.now();
    await service.close();
    service = null;
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('fails fast against a dead broker, naming the service URL and the topic', async () => {
    const port = await deadPort();
    const url = onNative() ? `pulsar://127.0.0.1:${port}` : `http://127.0.0.1:${port}`;
    const { client: dead } = await createPulsarClient({ serviceUrl: url });
    const library = toLibraryClient(dead);
    const started = Date.now();
    const failure = await library.createProducer({ topic: 'orders-parity' }).catch((error: unknown) => error);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).message)).toContain(`127.0.0.1:${port}`);
    expect(String((failure as Error).message)).toContain('orders-parity');
    await dead.close();
  });

  it('names the namespace that does not exist', async () => {
    const failure = await client
      .subscribe({ topic: 'persistent://public/no-such-ns/orders', subscription: 's', subscriptionType: 'Shared' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).message)).toMatch(/no-such-ns/);
  });

  it('refuses a malformed topic name with an error that names it', async () => {
    const publisher = new BabelPulsarClient({ serviceUrl: serviceUrl(), topic: uniqueTopic('parity-topic') });
    const failure = await publisher
      .publish(URN, {}, { topic: 'persistent://only-two/parts' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BabelQueueError);
    expect(String((failure as Error).message)).toMatch(/only-two\/parts/);
    await publisher.close();
  });
});
