// Runs the README snippets (test/integration/module/readme-snippets/*.ts) against the real broker, so every
// example in the README compiles and works as shown.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { ConsoleLogger, Logger, type INestApplication, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AsyncMicroserviceOptions } from '@nestjs/microservices';
import { BabelPulsarClient, BabelPulsarServer, EnvelopeCodec } from '../../../lib/index.js';
import { deadLetterRecord } from '../../../lib/envelope/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { type RedriveItem } from '../../../lib/redrive/index.js';
import {
  envelopeOf,
  rawClient,
  rawSubscribe,
  receiveOne,
  serviceUrl,
  uniqueTopic,
  waitFor,
} from './support/helpers.js';

jest.setTimeout(90_000);

type Snippets = {
  main: typeof import('./readme-snippets/bootstrap.js');
  topology: typeof import('./readme-snippets/topology.module.js');
  redrive: typeof import('./readme-snippets/redrive.js');
  idempotency: typeof import('./readme-snippets/idempotency.module.js');
  quickStart: typeof import('./readme-snippets/app.module.js');
  asyncModule: typeof import('./readme-snippets/app-async.module.js');
};

describe('README snippets (live broker)', () => {
  const topic = uniqueTopic('readme');
  const raw = rawClient();
  let snippets: Snippets;
  let app: INestApplication | INestMicroservice | undefined;

  beforeAll(async () => {
    // The snippets read their settings from the environment when their modules load.
    process.env.PULSAR_URL = serviceUrl();
    process.env.ORDERS_TOPIC = topic;
    process.env.PORT = '0';
    process.env.PAYMENTS_TOPIC = uniqueTopic('payments');
    process.env.LEDGER_TOPIC = uniqueTopic('ledger');
    process.env.CHARGES_TOPIC = uniqueTopic('charges');
    process.env.REDIS_URL = process.env.BQ_REDIS_URL ?? 'redis://127.0.0.1:16379';
    Logger.overrideLogger(false);
    snippets = {
      main: await import('./readme-snippets/bootstrap.js'),
      topology: await import('./readme-snippets/topology.module.js'),
      redrive: await import('./readme-snippets/redrive.js'),
      idempotency: await import('./readme-snippets/idempotency.module.js'),
      quickStart: await import('./readme-snippets/app.module.js'),
      asyncModule: await import('./readme-snippets/app-async.module.js'),
    };
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  afterAll(async () => {
    await raw.close();
    snippets.idempotency.redis.disconnect();
    Logger.overrideLogger(new ConsoleLogger());
    for (const key of [
      'PULSAR_URL',
      'ORDERS_TOPIC',
      'PORT',
      'PAYMENTS_TOPIC',
      'LEDGER_TOPIC',
      'CHARGES_TOPIC',
      'REDIS_URL',
    ])
      delete process.env[key];
  });

  it('forRoot + standalone microservice: publishing and consuming as shown', async () => {
    const observer = await rawSubscribe(raw, topic);
    app = await snippets.main.bootstrapMicroservice();
    const orders = app.get(snippets.quickStart.OrdersService);
    const invoices = app.get(snippets.quickStart.InvoicesService);

    const id = await orders.placeOrder({ id: 1, total: 25 }, 'trace-from-readme');
    await waitFor('the invoice', () => invoices.invoiced.get(1) === 25);
    const message = await receiveOne(observer);
    expect(envelopeOf(message)).toMatchObject({ trace_id: 'trace-from-readme', meta: { id, queue: topic } });
    expect({ ...message.getProperties() }).toMatchObject({ 'x-tenant': 'acme' });
    expect(message.getPartitionKey()).toBe('order-1');

    await orders.cancel(1);
    await waitFor('the cancellation', () => !invoices.invoiced.has(1));
    expect(envelopeOf(await receiveOne(observer)).job).toBe('urn:babel:orders:cancelled');

    const reminder = await orders.remindUnpaid(1);
    expect(reminder).toEqual(expect.any(String));
    await observer.close();
  });

  it('forRoot + hybrid application', async () => {
    const hybrid = await snippets.main.bootstrapHybrid();
    app = hybrid;
    expect(await hybrid.getUrl()).toMatch(/^http:\/\//);
    await hybrid.get(snippets.quickStart.OrdersService).placeOrder({ id: 2, total: 40 });
    const invoices = hybrid.get(snippets.quickStart.InvoicesService);
    await waitFor('the invoice', () => invoices.invoiced.get(2) === 40);
  });

  it('forRootAsync with a config service; a failing message reaches the DI hooks class after maxAttempts', async () => {
    process.env.ORDERS_MAX_ATTEMPTS = '2';
    try {
      const { AppModule, AlertsService } = snippets.asyncModule;
      app = await NestFactory.createMicroservice<AsyncMicroserviceOptions>(AppModule, {
        inject: [BabelPulsarServer],
        useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
      });
      await app.listen();
      const dlq = await rawSubscribe(raw, `${topic}.dlq`);
      const id = await app.get(snippets.quickStart.OrdersService).placeOrder({ id: 3, total: -1 });
      const alerts = app.get(AlertsService);
      await waitFor('the dead-letter alert', () => alerts.sent.length > 0);
      expect(alerts.sent).toEqual(['a message was dead-lettered (failed)']);
      expect(envelopeOf(await receiveOne(dlq))).toMatchObject({
        meta: { id },
        attempts: 2,
        dead_letter: { reason: 'failed', error: 'order 3 has a negative total' },
      });
      await dlq.close();
    } finally {
      delete process.env.ORDERS_MAX_ATTEMPTS;
    }
  });

  it('topology: a handler on its own topic and subscription, and a named registration with its own server', async () => {
    const { bootstrapPayments, LedgerService, PaymentsController } = snippets.topology;
    const payments = await bootstrapPayments();
    app = payments;
    await payments.get(BabelPulsarClient).publish('urn:babel:payments:refunded', { order_id: 7 });
    await payments.get(LedgerService).record(8, 12);
    const controller = payments.get(PaymentsController);
    await waitFor(
      'the refund and the ledger entry',
      () => controller.refunded.length + controller.entries.length === 2,
    );
    expect(controller.refunded).toEqual([7]);
    expect(controller.entries).toEqual([8]);
    expect(payments.get(BabelPulsarServer).describe()).toEqual([
      expect.objectContaining({ topic: process.env.PAYMENTS_TOPIC, subscription: 'refunds' }),
    ]);
  });

  it('redrive from code: only the selected failed records go back, marked as replays', async () => {
    const queue = uniqueTopic('redrive-snippet');
    const dlq = `${queue}.dlq`;
    const { redriveEuOrders } = snippets.redrive;
    // A first run creates the redrive subscription, before any record arrives.
    expect((await redriveEuOrders(dlq, () => undefined)).read).toBe(0);
    const target = await rawSubscribe(raw, queue);
    const producer = await raw.createProducer({ topic: dlq });
    for (const region of ['eu', 'us']) {
      const envelope = EnvelopeCodec.make('urn:babel:orders:created', { region }, { queue, id: `order-${region}` });
      const record = deadLetterRecord(envelope, {
        reason: 'failed',
        error: new Error('down'),
        attempts: 3,
        originalQueue: queue,
      });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(record), properties: pulsarProperties(record) });
    }
    await producer.close();
    const items: RedriveItem[] = [];
    const result = await redriveEuOrders(dlq, (item) => items.push(item));
    expect(result).toMatchObject({ read: 2, redriven: 1, skipped: 1 });
    expect(items.map(({ outcome, id }) => `${outcome} ${id}`)).toEqual(['redriven order-eu', 'skipped order-us']);
    const copy = await receiveOne(target);
    expect(envelopeOf(copy)).toMatchObject({ meta: { id: 'order-eu' }, attempts: 0 });
    expect(copy.getProperties()['bq-replay-bypass']).toBe('1');
    await target.close();
  });

  it('idempotency: a meta.id published twice runs each handler once (Redis module-wide, in-memory per handler)', async () => {
    const { ChargesModule, ChargesController } = snippets.idempotency;
    const service = await NestFactory.createMicroservice<AsyncMicroserviceOptions>(ChargesModule, {
      inject: [BabelPulsarServer],
      useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
    });
    app = service;
    const settled: unknown[] = [];
    service.get(BabelPulsarServer).on('settled', (event) => settled.push(event));
    await service.listen();
    const publisher = service.get(BabelPulsarClient);
    const suffix = uniqueTopic('id');
    for (let i = 0; i < 2; i++) {
      await publisher.publish('urn:babel:charges:captured', { order_id: 1 }, { id: `captured-${suffix}` });
      await publisher.publish('urn:babel:charges:refunded', { order_id: 2 }, { id: `refunded-${suffix}` });
    }
    await waitFor('four deliveries settled', () => settled.length === 4);
    const controller = service.get(ChargesController);
    expect(controller.captures).toEqual([1]);
    expect(controller.refunds).toEqual([2]);
  });
});
