// The dead-letter dashboard in a real headless Chromium (Debian's, installed by test/support/global-setup.mjs),
// served by a hybrid Nest app on the client under test: load, filter, open a record, redrive one, see the app
// handle it and the list lose it. A screenshot goes to test-artifacts/dashboard/.
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { jest } from '@jest/globals';
import { Controller, Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueDashboardModule,
  BabelQueueModule,
  type BabelQueueDashboardOptions,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { chromiumPath } from '../../../scripts/lib/chromium.mjs';
import { backlog, newClient, serviceUrl, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';

jest.setTimeout(90_000);

const artifacts = path.resolve('test-artifacts/dashboard');
const FAILS = 'urn:babel:dashboard:order-placed';
const OTHER = 'urn:babel:dashboard:other';

/** Orders fail until the fix is in (app state, not the message): then they are handled. */
@Injectable()
class Orders {
  fixed = false;
  handled: string[] = [];
}

@Controller()
class OrderHandlers {
  constructor(private readonly orders: Orders) {}
  @BabelHandler(FAILS)
  placed(data: { order: string }) {
    if (!this.orders.fixed) throw new Error(`customer of ${data.order} is not registered`);
    this.orders.handled.push(data.order);
  }
  @BabelHandler(OTHER)
  other() {
    throw new Error('other always fails');
  }
}

/** Lets a request in only with the operator's header. */
class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-operator'] === 'yes';
  }
}

async function startApp(topic: string, dashboard: BabelQueueDashboardOptions): Promise<INestApplication> {
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { maxAttempts: 1 },
        logger: quietLogger,
      }),
      BabelQueueDashboardModule.forRoot(dashboard),
    ],
    controllers: [OrderHandlers],
    providers: [Orders],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  app.connectMicroservice({ strategy: app.get(BabelPulsarServer) });
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  return app;
}

let browser: Browser;
let observer: PulsarClientLike;
beforeAll(async () => {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: test/support/global-setup.mjs installs it (apt-get)');
  browser = await chromium.launch({
    executablePath,
    headless: true,
    // No sandbox as root; no background traffic to hosts this machine cannot reach.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  observer = newClient();
  fs.mkdirSync(artifacts, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await observer?.close();
});

test('the dashboard refuses to start without a guard unless the app is said to be private', () => {
  expect(() => BabelQueueDashboardModule.forRoot({ topics: ['orders.dlq'] })).toThrow(
    /refuses to start without a guard.*\{ guard: YourAuthGuard \}, or \{ private: true \}/,
  );
  expect(() => BabelQueueDashboardModule.forRoot({ topics: ['orders.dlq'], private: true })).not.toThrow();
  expect(() => BabelQueueDashboardModule.forRoot({ topics: [], guard: new OperatorGuard() })).toThrow(/topics/);
});

test('load, filter, open a record, redrive one: the app handles it and it leaves the list', async () => {
  const topic = uniqueTopic('dashboard');
  const dlq = `${topic}.dlq`;
  const app = await startApp(topic, { topics: [dlq], guard: OperatorGuard });
  let page: Page | undefined;
  try {
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    // Without the operator's header the guard answers 403, on the page and on the API.
    expect((await fetch(`${base}/babelqueue`)).status).toBe(403);
    expect((await fetch(`${base}/babelqueue/api/topics`)).status).toBe(403);

    const publisher = app.get(BabelPulsarClient);
    await publisher.publish(FAILS, { order: 'A-1' }, { id: 'order-a1' });
    await publisher.publish(FAILS, { order: 'A-2' }, { id: 'order-a2' });
    await publisher.publish(OTHER, { order: 'X-9' });
    await waitFor('three dead letters', async () => (await backlog(dlq, 'babelqueue-redrive')) === 3);
    app.get(Orders).fixed = true; // the fix

    const context = await browser.newContext({ extraHTTPHeaders: { 'x-operator': 'yes' } });
    page = await context.newPage();
    await page.goto(`${base}/babelqueue`);
    // Load: the topic with its count, and its records.
    await page.locator('#topics tr.topic td[data-count]').filter({ hasText: '3' }).waitFor();
    await page.locator('#records tr').nth(2).waitFor();
    expect(await page.locator('#records tr').count()).toBe(3);

    // Filter by URN.
    await page.fill('#f-urn', FAILS);
    await page.click('#apply');
    await page.locator('#status', { hasText: '2 record(s) shown of 3' }).waitFor();
    const rowA1 = page.locator('#records tr', { hasText: 'order-a1' });
    expect(await page.locator('#records tr').count()).toBe(2);

    // Open a record: its error and body.
    await rowA1.locator('button.open').click();
    await page.locator('#detail-error', { hasText: 'customer of A-1 is not registered' }).waitFor();
    expect(await page.locator('#detail-exception').textContent()).toBe('Error');
    expect(await page.locator('#detail-envelope').textContent()).toContain('"dead_letter":{"reason":"failed"');

    const client = process.env.BQ_TEST_CLIENT ?? 'websocket';
    await page.screenshot({ path: path.join(artifacts, `record-${client}.png`), fullPage: true });

    // Redrive one: a dry run first, then the real thing.
    await rowA1.locator('input.pick').check();
    await page.click('#redrive');
    await page.locator('#plan-text', { hasText: 'Dry run: would redrive 1 record(s): order-a1' }).waitFor();
    expect(app.get(Orders).handled).toEqual([]);
    await page.click('#confirm');
    await page.locator('#plan-text', { hasText: 'Redriven 1 record(s).' }).waitFor();

    // Handled by the app, and gone from the list (the others are still there).
    await waitFor('the app handles A-1', () => app.get(Orders).handled.includes('A-1'));
    await page.click('#apply');
    await page.locator('#status', { hasText: '1 record(s) shown of 2' }).waitFor();
    expect(await page.locator('#records tr', { hasText: 'order-a1' }).count()).toBe(0);
    expect(await page.locator('#records tr', { hasText: 'order-a2' }).count()).toBe(1);
    await page.locator('#topics td[data-count]', { hasText: '2' }).waitFor();
    await page.screenshot({ path: path.join(artifacts, `after-redrive-${client}.png`), fullPage: true });
    expect(app.get(Orders).handled).toEqual(['A-1']);
    await context.close();
  } finally {
    await app.close();
  }
});

test('purge from the page is a dry run first, then removes only the ticked record', async () => {
  const topic = uniqueTopic('dashboard-purge');
  const dlq = `${topic}.dlq`;
  const app = await startApp(topic, { topics: [dlq], private: true, path: 'ops/dead-letters' });
  try {
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const publisher = app.get(BabelPulsarClient);
    await publisher.publish(OTHER, { order: 'P-1' }, { id: 'purge-1' });
    await publisher.publish(OTHER, { order: 'P-2' }, { id: 'purge-2' });
    await waitFor('two dead letters', async () => (await backlog(dlq, 'babelqueue-redrive')) === 2);

    const page = await browser.newPage();
    await page.goto(`${base}/ops/dead-letters`);
    await page.locator('#records tr', { hasText: 'purge-2' }).waitFor();
    await page.locator('#records tr', { hasText: 'purge-2' }).locator('input.pick').check();
    await page.click('#purge');
    await page.locator('#plan-text', { hasText: 'Dry run: would purge 1 record(s): purge-2' }).waitFor();
    expect(await backlog(dlq, 'babelqueue-redrive')).toBe(2);
    await page.click('#confirm');
    await page.locator('#plan-text', { hasText: 'Purged 1 record(s).' }).waitFor();
    expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1);
    await page.locator('#status', { hasText: '1 record(s) shown of 1' }).waitFor();
    expect(await page.locator('#records tr', { hasText: 'purge-1' }).count()).toBe(1);

    // The API refuses a topic that is not configured (it never creates one) and a bad filter.
    expect((await fetch(`${base}/ops/dead-letters/api/records?topic=other.dlq`)).status).toBe(404);
    expect((await fetch(`${base}/ops/dead-letters/api/records?topic=${dlq}&reason=bogus`)).status).toBe(400);
    await page.close();
  } finally {
    await app.close();
  }
});
