// Unblocking a key in a real headless Chromium (as subscriptions.test.ts) and with `babelqueue-pulsar unblock`, on a
// module-built app on the client under test with ordering 'key' and onExhausted 'block-key': the blocked keys show
// on their subscription's row, Unblock dead-letters the key's message and its next one runs; the CLI does the same
// through the same guarded endpoint. A screenshot goes to test-artifacts/dashboard/.
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { jest } from '@jest/globals';
import { Controller, Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { chromium, type Browser } from 'playwright-core';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueDashboardModule,
  BabelQueueModule,
  type SettledEvent,
} from '../../../lib/index.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { chromiumPath } from '../../../scripts/lib/chromium.mjs';
import { serviceUrl, testClientKind, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';

jest.setTimeout(120_000);

const artifacts = path.resolve('test-artifacts/dashboard');
const POSTED = 'urn:babel:dashboard:posted';

@Injectable()
class Ledger {
  handled: string[] = [];
}

@Controller()
class LedgerHandlers {
  constructor(private readonly ledger: Ledger) {}
  @BabelHandler(POSTED)
  posted(@Payload() { key, seq }: { key: string; seq: number }) {
    if (key.startsWith('stuck') && seq === 0) throw new Error('never works');
    this.ledger.handled.push(`${key}/${seq}`);
  }
}

class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-operator'] === 'yes';
  }
}

let browser: Browser;
let app: INestApplication;
let topic: string;
const settled: SettledEvent[] = [];

beforeAll(async () => {
  topic = uniqueTopic('dashboard-unblock');
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        logger: quietLogger,
        consumer: {
          subscriptionType: 'KeyShared',
          ordering: 'key',
          onExhausted: 'block-key',
          maxAttempts: 1,
          concurrency: 4,
        },
      }),
      BabelQueueDashboardModule.forRoot({ topics: [`${topic}.dlq`], guard: OperatorGuard }),
    ],
    controllers: [LedgerHandlers],
    providers: [Ledger],
  })
  class AppModule {}
  app = await NestFactory.create(AppModule, { logger: false });
  const server = app.get(BabelPulsarServer);
  server.on('settled', (event) => settled.push({ ...event }));
  app.connectMicroservice({ strategy: server });
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: test/support/global-setup.mjs installs it (apt-get)');
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
  fs.mkdirSync(artifacts, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

test('blocked keys show on their row; Unblock and `babelqueue-pulsar unblock` dead-letter and let the key go on', async () => {
  const base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/babelqueue`;
  const ledger = app.get(Ledger);
  const publisher = app.get(BabelPulsarClient);
  for (const key of ['stuck-a', 'stuck-b', 'free'])
    for (let seq = 0; seq < 2; seq++) await publisher.publish(POSTED, { key, seq }, { key });
  await waitFor('the free key handled', () => ledger.handled.includes('free/1'));

  // Guarded and JSON-only like pause and resume; a key that is not blocked is a 400 naming those that are.
  const unblock = (body: string, headers: Record<string, string>) =>
    fetch(`${base}/api/subscriptions/unblock`, { method: 'POST', headers, body });
  const json = JSON.stringify({ topic, subscription: 'babelqueue', key: 'free' });
  expect((await unblock(json, { 'content-type': 'application/json' })).status).toBe(403);
  expect((await unblock(json, { 'x-operator': 'yes', 'content-type': 'text/plain' })).status).toBe(415);
  await waitFor('both keys blocked', () => app.get(BabelPulsarServer).describe()[0]?.blockedKeys?.length === 2);
  const notBlocked = await unblock(json, { 'x-operator': 'yes', 'content-type': 'application/json' });
  expect(notBlocked.status).toBe(400);
  expect(((await notBlocked.json()) as { message: string }).message).toMatch(/key "free" is not blocked; blocked: /);

  const context = await browser.newContext({ extraHTTPHeaders: { 'x-operator': 'yes' } });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(base);
  const blockedA = page.locator('#subscription-rows tr.blocked-keys span.blocked-key[data-key="stuck-a"]');
  await blockedA.waitFor();
  await page.locator('#subscription-rows span.blocked-key[data-key="stuck-b"]').waitFor();
  await page.screenshot({ path: path.join(artifacts, `blocked-keys-${testClientKind()}.png`), fullPage: true });
  expect(ledger.handled).not.toContain('stuck-a/1');

  await blockedA.locator('button.unblock').click();
  await waitFor('stuck-a goes on', () => ledger.handled.includes('stuck-a/1'));
  await blockedA.waitFor({ state: 'detached', timeout: 20_000 });
  expect(ledger.handled).not.toContain('stuck-b/1');
  await context.close();

  // The CLI, through the same endpoint and guard.
  const out: string[] = [];
  const err: string[] = [];
  const args = ['unblock', '--url', base, '--topic', topic, '--subscription', 'babelqueue', '--key', 'stuck-b'];
  const code = await runCli([...args, '--header', 'x-operator: yes'], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  expect({ code, err }).toEqual({ code: 0, err: [] });
  expect(out[0]).toMatch(/unblocked key "stuck-b" on .* its message was dead-lettered and the key goes on/);
  await waitFor('stuck-b goes on', () => ledger.handled.includes('stuck-b/1'));
  // Without the guard's header the CLI is refused, exit 1.
  expect(await runCli(args, { out: () => {}, err: () => {} })).toBe(1);

  const deadLettered = settled.filter((event) => event.action === 'dead-letter');
  expect(deadLettered.map((event) => event.written)).toEqual([true, true]);
  expect(settled.filter((event) => event.action === 'block')).toHaveLength(2);
  expect(app.get(BabelPulsarServer).describe()[0]!.blockedKeys).toEqual([]);
});
