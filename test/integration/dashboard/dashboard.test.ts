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
  EnvelopeCodec,
  type BabelQueueDashboardOptions,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
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

/** A record written straight to the DLQ (another SDK, anyone with write access): only what it says of itself. */
async function publishForeignRecord(
  dlq: string,
  id: string,
  block: { reason?: string; failed_at?: unknown; original_queue?: string },
): Promise<void> {
  const envelope = EnvelopeCodec.make(OTHER, { order: id }, { queue: block.original_queue ?? 'x', id });
  const body = {
    ...envelope,
    dead_letter: {
      reason: block.reason ?? 'failed',
      error: 'boom',
      exception: 'Error',
      failed_at: block.failed_at ?? Date.now(),
      original_queue: block.original_queue ?? 'x',
      attempts: 1,
      lang: 'php',
    },
  };
  const producer = await observer.createProducer({ topic: dlq });
  await producer.send({ data: Buffer.from(JSON.stringify(body)), properties: pulsarProperties(envelope) });
  await producer.close();
}

test('headers: a CSP by hashes, no framing, nosniff, no-store, on the page, the API and a refusal', async () => {
  const topic = uniqueTopic('dashboard-headers');
  const app = await startApp(topic, { topics: [`${topic}.dlq`], guard: OperatorGuard });
  try {
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const operator = { headers: { 'x-operator': 'yes' } };
    const page = await fetch(`${base}/babelqueue`, operator);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(
      /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*'; style-src 'sha256-[A-Za-z0-9+/]+=*'; connect-src 'self';/,
    );
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    for (const response of [
      page,
      await fetch(`${base}/babelqueue/api/topics`, operator),
      await fetch(`${base}/babelqueue/api/topics`), // the guard's 403
    ]) {
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
    // State changes only as JSON: a cross-site form cannot send one.
    for (const [type, body] of [
      ['text/plain', '{"topic":"x","messageIds":["(1,1,-1,-1)"],"dryRun":false}'],
      ['application/x-www-form-urlencoded', 'topic=x&messageIds=(1,1,-1,-1)&dryRun=false'],
    ] as const) {
      const response = await fetch(`${base}/babelqueue/api/purge`, {
        method: 'POST',
        headers: { 'x-operator': 'yes', 'content-type': type },
        body,
      });
      expect(response.status).toBe(415);
    }
    // Framed by another origin: Chromium refuses to render it.
    const framing = await browser.newContext({ extraHTTPHeaders: { 'x-operator': 'yes' } });
    const framer = await framing.newPage();
    const violations: string[] = [];
    framer.on('console', (message) => violations.push(message.text()));
    await framer.setContent(`<iframe id="f" src="${base}/babelqueue"></iframe>`);
    await framer.waitForTimeout(0);
    await waitFor('the frame to settle', () => framer.frames().length === 2 && framer.frames()[1]!.url() !== '');
    const frame = framer.frames()[1]!;
    await waitFor('the frame refused', async () =>
      violations.some((text) => /frame-ancestors|Refused to (display|frame)/i.test(text)),
    );
    expect(await frame.locator('#topics').count()).toBe(0);
    await framing.close();
  } finally {
    await app.close();
  }
});

test('untrusted records: bounded pages, counts by reason, a failed_at no Date holds, a forged target refused by name', async () => {
  const topic = uniqueTopic('dashboard-untrusted');
  const dlq = `${topic}.dlq`;
  const victim = `persistent://public/default/${topic}-payments`;
  const app = await startApp(topic, { topics: [dlq], private: true, maxRead: 4, pageSize: 2 });
  try {
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    await fetch(`${base}/babelqueue/api/topics`); // the redrive subscription exists before the records
    await publishForeignRecord(dlq, 'f-constructor', { reason: 'constructor' });
    await publishForeignRecord(dlq, 'f-proto', { reason: '__proto__' });
    await publishForeignRecord(dlq, 'f-time', { failed_at: 1e300 });
    await publishForeignRecord(dlq, 'f-forged', { original_queue: victim });
    await publishForeignRecord(dlq, 'f-beyond', {});
    await waitFor('five records', async () => (await backlog(dlq, 'babelqueue-redrive')) === 5);

    // The API: at most maxRead read, pages of pageSize.
    const first = (await (await fetch(`${base}/babelqueue/api/records?topic=${dlq}`)).json()) as {
      records: Array<{ id: string }>;
      read: number;
      more: boolean;
      truncated: boolean;
      maxRead: number;
    };
    expect(first).toMatchObject({ read: 4, more: true, truncated: true, maxRead: 4 });
    expect(first.records.map((r) => r.id)).toEqual(['f-constructor', 'f-proto']);
    const second = (await (await fetch(`${base}/babelqueue/api/records?topic=${dlq}&offset=2`)).json()) as {
      records: Array<{ id: string }>;
      more: boolean;
    };
    expect(second.records.map((r) => r.id)).toEqual(['f-time', 'f-forged']);
    expect(second.more).toBe(false);
    expect((await fetch(`${base}/babelqueue/api/records?topic=${dlq}&offset=-1`)).status).toBe(400);
    const [summary] = (await (await fetch(`${base}/babelqueue/api/topics`)).json()) as Array<{
      byReason: Record<string, number>;
      truncated: boolean;
    }>;
    expect(summary!.byReason).toEqual({ constructor: 1, ['__proto__']: 1, failed: 2 });
    expect(summary!.truncated).toBe(true);

    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${base}/babelqueue`);
    await page.locator('#topics td', { hasText: 'constructor 1' }).waitFor();
    expect(await page.locator('#topics td[data-count]').textContent()).toBe('4+');
    expect(await page.locator('#topics').textContent()).not.toContain('native code');
    await page.locator('#status', { hasText: 'only the oldest 4 are read' }).waitFor();
    expect(await page.locator('#records tr').count()).toBe(2);

    // The next page: the record whose failed_at no Date can hold opens, with the publish time.
    await page.click('#next');
    await page.locator('#records tr', { hasText: 'f-time' }).waitFor();
    await page.locator('#records tr', { hasText: 'f-time' }).locator('button.open').click();
    await page.locator('#detail-failedat').waitFor();
    expect(await page.locator('#detail-failedat').textContent()).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await page.locator('#detail-metaid').textContent()).toBe('f-time');

    // A redrive of the forged record: refused by name in the plan, and nothing is written.
    await page.locator('#records tr', { hasText: 'f-forged' }).locator('input.pick').check();
    await page.click('#redrive');
    await page.locator('#plan-refused', { hasText: `f-forged names ${victim}, not an allowed target` }).waitFor();
    expect(await page.locator('#plan-text').textContent()).toContain('would redrive 0 record(s)');
    await page.click('#confirm');
    await page.locator('#plan-text', { hasText: '1 refused (target not allowed)' }).waitFor();
    expect(await backlog(dlq, 'babelqueue-redrive')).toBe(5);
    // The page ran under its CSP without a single violation.
    expect(refused).toEqual([]);
    await page.close();
  } finally {
    await app.close();
  }
});
