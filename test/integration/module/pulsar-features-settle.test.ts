// Runs the snippets of docs/pulsar-features.md "Settling from the handler", "Your own retriable rule" and "Pause and
// resume" (test/integration/module/readme-snippets/{stock,payments,maintenance}.module.ts) against the real broker,
// and the settling one in the testing kit too (its retry waits 2 s, which the kit's clock skips).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { ConsoleLogger, Logger, type INestMicroservice } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BabelPulsarClient, BabelPulsarServer, BabelQueueHealthIndicator } from '../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar, useInMemoryPulsar } from '../../../lib/testing/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import {
  envelopeOf,
  rawClient,
  rawSubscribe,
  receiveOne,
  serviceUrl,
  sleep,
  uniqueTopic,
  waitFor,
} from './support/helpers.js';

jest.setTimeout(60_000);

type Snippets = {
  stock: typeof import('./readme-snippets/stock.module.js');
  payments: typeof import('./readme-snippets/payments.module.js');
  maintenance: typeof import('./readme-snippets/maintenance.module.js');
};

describe('docs/pulsar-features.md snippets: settling, retriable rule, pause (live broker)', () => {
  const raw = rawClient();
  let snippets: Snippets;
  let app: INestMicroservice | undefined;
  const env = ['PULSAR_URL', 'STOCK_TOPIC', 'CAPTURE_TOPIC', 'SHIPMENTS_TOPIC'];

  beforeAll(async () => {
    process.env.PULSAR_URL = serviceUrl();
    process.env.STOCK_TOPIC = uniqueTopic('stock');
    process.env.CAPTURE_TOPIC = uniqueTopic('captures');
    process.env.SHIPMENTS_TOPIC = uniqueTopic('shipments');
    Logger.overrideLogger(false);
    snippets = {
      stock: await import('./readme-snippets/stock.module.js'),
      payments: await import('./readme-snippets/payments.module.js'),
      maintenance: await import('./readme-snippets/maintenance.module.js'),
    };
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  afterAll(async () => {
    await raw.close();
    Logger.overrideLogger(new ConsoleLogger());
    for (const key of env) delete process.env[key];
  });

  it('settling: a known SKU is reserved, an unknown one dead-lettered at once with the reason', async () => {
    const { StockModule, Inventory } = snippets.stock;
    const dlq = await rawSubscribe(raw, `${process.env.STOCK_TOPIC}.dlq`);
    ({ app } = await startMicroservice(rootModule({ imports: [StockModule] })));
    const publisher = app.get(BabelPulsarClient);
    await publisher.publish('urn:babel:stock:reserve', { sku: 'sku-1' });
    const id = await publisher.publish('urn:babel:stock:reserve', { sku: 'sku-9' });
    const record = envelopeOf(await receiveOne(dlq));
    await dlq.close();
    expect(record).toMatchObject({
      meta: { id },
      attempts: 1,
      dead_letter: { reason: 'failed', error: 'unknown SKU sku-9', exception: 'BabelNonRetriableError' },
    });
    await waitFor('the reservation', () => app!.get(Inventory).reserved.length === 1);
    expect(app.get(Inventory).reserved).toEqual(['sku-1']);
  });

  it('settling, in the kit: a retry copy due in 2 s while the inventory syncs, then reserved', async () => {
    const { StockModule, Inventory } = snippets.stock;
    const pulsar = new InMemoryPulsar();
    const moduleRef = await useInMemoryPulsar(Test.createTestingModule({ imports: [StockModule] }), pulsar).compile();
    const kit = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer) });
    await kit.listen();
    const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), pulsar);
    try {
      const inventory = kit.get(Inventory);
      inventory.syncing = true;
      const message = await harness.publish('urn:babel:stock:reserve', { sku: 'sku-2' });
      await waitFor('the retry copy', () => pulsar.published(process.env.STOCK_TOPIC!).length === 2);
      inventory.syncing = false;
      pulsar.advance(2000);
      const outcome = await message.outcome();
      expect(outcome.kind).toBe('handled');
      expect(outcome.retries.map((copy) => [copy.properties['bq-attempts'], copy.properties['bq-delay']])).toEqual([
        ['1', '2000'],
      ]);
      expect(inventory.reserved).toEqual(['sku-2']);
    } finally {
      await harness.close();
      await kit.close();
    }
  });

  it('your own retriable rule: a gateway 5xx is retried to maxAttempts, a 4xx and a declined card are not', async () => {
    const { PaymentsModule, Gateway } = snippets.payments;
    const dlq = await rawSubscribe(raw, `${process.env.CAPTURE_TOPIC}.dlq`);
    ({ app } = await startMicroservice(rootModule({ imports: [PaymentsModule] })));
    const publisher = app.get(BabelPulsarClient);
    await publisher.publish('urn:babel:payments:capture', { order_id: 1, answer: 503 });
    await publisher.publish('urn:babel:payments:capture', { order_id: 2, answer: 404 });
    await publisher.publish('urn:babel:payments:capture', { order_id: 3, answer: 'declined' });
    const records = [
      envelopeOf(await receiveOne(dlq)),
      envelopeOf(await receiveOne(dlq)),
      envelopeOf(await receiveOne(dlq)),
    ];
    await dlq.close();
    const byOrder = new Map(records.map((record) => [(record.data as { order_id: number }).order_id, record]));
    expect(byOrder.get(1)).toMatchObject({ attempts: 3, dead_letter: { error: 'payment gateway answered 503' } });
    expect(byOrder.get(2)).toMatchObject({ attempts: 1, dead_letter: { error: 'payment gateway answered 404' } });
    expect(byOrder.get(3)).toMatchObject({ attempts: 1, dead_letter: { error: 'card of order 3 declined' } });
    expect([...app.get(Gateway).calls].sort()).toEqual([1, 1, 1, 2, 3]);
  });

  it('pause and resume: held while paused (status paused, health up), all delivered once after resume', async () => {
    const { ShipmentsModule, Shipments, WarehouseWindow } = snippets.maintenance;
    ({ app } = await startMicroservice(rootModule({ imports: [ShipmentsModule] })));
    const window = app.get(WarehouseWindow);
    const publisher = app.get(BabelPulsarClient);
    await window.close();
    expect(window.status()).toBe('paused');
    expect(app.get(BabelQueueHealthIndicator).check()).toMatchObject({
      healthy: true,
      consumers: { status: 'paused', topics: [expect.objectContaining({ paused: true })] },
    });
    for (let order = 1; order <= 5; order++)
      await publisher.publish('urn:babel:shipments:requested', { order_id: order });
    await sleep(500);
    expect(app.get(Shipments).shipped).toEqual([]);
    window.open();
    expect(window.status()).toBe('connected');
    await waitFor('five shipments', () => app!.get(Shipments).shipped.length === 5);
    await sleep(300);
    expect([...app.get(Shipments).shipped].sort()).toEqual([1, 2, 3, 4, 5]);
  });
});
