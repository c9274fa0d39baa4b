// The dashboard's live subscriptions view in a real headless Chromium (Debian's, as dashboard.test.ts), served by
// a hybrid Nest app on the client under test: a backlog shows with its rate, Pause stops the handling (the backlog
// waits), Resume drains it. A screenshot goes to test-artifacts/dashboard/.
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { jest } from '@jest/globals';
import { Controller, Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { chromium, type Browser, type Locator } from 'playwright-core';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueDashboardModule,
  BabelQueueModule,
} from '../../../lib/index.js';
import { chromiumPath } from '../../../scripts/lib/chromium.mjs';
import { backlog, serviceUrl, sleep, testClientKind, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';

jest.setTimeout(120_000);

const artifacts = path.resolve('test-artifacts/dashboard');
const PLACED = 'urn:babel:dashboard:order-placed';
const MESSAGES = 400;

/** Handles orders one at a time, slowly while a backlog is to be seen, then at full speed. */
@Injectable()
class Orders {
  delayMs = 40;
  handled = 0;
}

@Controller()
class OrderHandlers {
  constructor(private readonly orders: Orders) {}
  @BabelHandler(PLACED)
  async placed() {
    if (this.orders.delayMs > 0) await sleep(this.orders.delayMs);
    this.orders.handled += 1;
  }
}

/** Lets a request in only with the operator's header. */
class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-operator'] === 'yes';
  }
}

/** An app with the dashboard; `consume: false` is one that only publishes (its server never starts). */
async function startApp(topic: string, consume: boolean): Promise<INestApplication> {
  @Module({
    imports: [
      BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, logger: quietLogger }),
      BabelQueueDashboardModule.forRoot({ topics: [`${topic}.dlq`], guard: OperatorGuard }),
    ],
    controllers: consume ? [OrderHandlers] : [],
    providers: [Orders],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  if (consume) {
    app.connectMicroservice({ strategy: app.get(BabelPulsarServer) });
    await app.startAllMicroservices();
  }
  await app.listen(0, '127.0.0.1');
  return app;
}

const baseOf = async (app: INestApplication) => (await app.getUrl()).replace('[::1]', '127.0.0.1');

let browser: Browser;
beforeAll(async () => {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: test/support/global-setup.mjs installs it (apt-get)');
  browser = await chromium.launch({
    executablePath,
    headless: true,
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
  fs.mkdirSync(artifacts, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const numberIn = async (row: Locator, field: string): Promise<number> =>
  Number.parseFloat((await row.locator(`[data-field="${field}"]`).textContent()) ?? '');

test('a backlog with its rate; Pause stops the handling and the backlog waits; Resume drains it', async () => {
  const topic = uniqueTopic('dashboard-subscriptions');
  const app = await startApp(topic, true);
  try {
    const base = await baseOf(app);
    // The same guard and the same JSON-only state changes as the rest of the dashboard.
    expect((await fetch(`${base}/babelqueue/api/subscriptions`)).status).toBe(403);
    const formPost = await fetch(`${base}/babelqueue/api/subscriptions/pause`, {
      method: 'POST',
      headers: { 'x-operator': 'yes', 'content-type': 'application/x-www-form-urlencoded' },
      body: `topic=${topic}&subscription=babelqueue`,
    });
    expect(formPost.status).toBe(415);

    const orders = app.get(Orders);
    const publisher = app.get(BabelPulsarClient);
    for (let sent = 0; sent < MESSAGES; sent += 50)
      await Promise.all(Array.from({ length: 50 }, (_, i) => publisher.publish(PLACED, { n: sent + i })));

    const context = await browser.newContext({ extraHTTPHeaders: { 'x-operator': 'yes' } });
    const page = await context.newPage();
    await page.goto(`${base}/babelqueue`);
    const row = page.locator('#subscription-rows tr.subscription');
    await row.waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.getAttribute('data-topic')).toBe(topic);
    expect(await row.getAttribute('data-subscription')).toBe('babelqueue');
    expect(await row.locator('td').nth(2).textContent()).toBe('Shared');

    // A backlog, and a handling rate once two readings were made.
    await waitFor('a backlog and a handling rate on the page', async () => {
      const [waiting, rate] = [await numberIn(row, 'backlog'), await numberIn(row, 'handled-rate')];
      return waiting > 0 && rate > 0;
    });
    expect(await row.getAttribute('data-state')).toBe('running');
    await page.screenshot({ path: path.join(artifacts, `subscriptions-${testClientKind()}.png`), fullPage: true });

    // Pause: the state says so and nothing more is handled; the backlog waits.
    await row.locator('button.pause').click();
    await page.locator('#subscription-rows tr.subscription[data-state="paused"]').waitFor();
    expect(await row.locator('button.resume').isEnabled()).toBe(true);
    const handledAtPause = orders.handled;
    await sleep(3500);
    expect(orders.handled).toBe(handledAtPause);
    expect(handledAtPause).toBeLessThan(MESSAGES);
    await waitFor('the paused row with its backlog', async () => (await numberIn(row, 'backlog')) > 0);
    // Acknowledged as settled: the broker's count follows within moments.
    await waitFor(
      'the broker counting the rest as waiting',
      async () => (await backlog(topic)) === MESSAGES - handledAtPause,
    );

    // Resume: it drains, and the page shows an empty backlog.
    orders.delayMs = 0;
    await row.locator('button.resume').click();
    await page.locator('#subscription-rows tr.subscription[data-state="running"]').waitFor();
    await waitFor('every message handled', () => orders.handled === MESSAGES, 60_000);
    await waitFor('the backlog drained on the page', async () => (await numberIn(row, 'backlog')) === 0, 20_000);
    await page.screenshot({ path: path.join(artifacts, `subscriptions-resumed-${testClientKind()}.png`) });
    await context.close();
  } finally {
    await app.close();
  }
});

test('an app that only publishes shows no subscriptions', async () => {
  const app = await startApp(uniqueTopic('dashboard-publisher'), false);
  try {
    const context = await browser.newContext({ extraHTTPHeaders: { 'x-operator': 'yes' } });
    const page = await context.newPage();
    await page.goto(`${await baseOf(app)}/babelqueue`);
    await page.locator('#no-subscriptions', { hasText: 'no subscriptions on this app' }).waitFor();
    await context.close();
  } finally {
    await app.close();
  }
});
