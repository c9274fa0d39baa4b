// The sample app as a separate process against the real broker, driven over HTTP, and `npm run demo` itself.
// One file, so the two builds of dist/ never run at the same time.
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvelopeCodec } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { buildSampleApp, freePort, startSampleApp } from '../../../scripts/lib/sample-app.mjs';
import { newClient, onNative, serviceUrl, testClientKind, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';

jest.setTimeout(240_000);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Handled {
  urn: string;
  messageId: string;
  traceId: string;
  attempts: number;
  replay: boolean;
  data: Record<string, unknown>;
  handledAt: number;
}
interface DeadLetter {
  properties: Record<string, string>;
  body: Record<string, any> | null;
  payload: string;
}

type App = Awaited<ReturnType<typeof startSampleApp>>;
let app: App;
let topic: string;
const client = newClient();

const post = async (route: string, body: unknown): Promise<string> => {
  const response = await fetch(`${app.base}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
};
const get = async <T>(route: string): Promise<T> => (await fetch(`${app.base}${route}`)).json() as Promise<T>;
const handledById = async (id: string) => (await get<Handled[]>('/orders')).find((h) => h.messageId === id);
const deadLetterFor = async (id: string) =>
  (await get<DeadLetter[]>('/dead-letters')).find((d) => (d.body?.meta?.id ?? d.properties['bq-message-id']) === id);

beforeAll(async () => {
  buildSampleApp();
  topic = uniqueTopic('sample-orders');
  app = await startSampleApp({
    PORT: String(await freePort()),
    ORDERS_TOPIC: topic,
    PULSAR_SERVICE_URL: serviceUrl(),
    PULSAR_WEB_URL: webUrl(),
  });
  // The redrive subscription must exist before dead letters arrive (Pulsar keeps nothing for a missing one).
  const response = await fetch(`${app.base}/dead-letters/redrive`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customer: 'nobody', dryRun: true }),
  });
  expect(response.status).toBe(200);
});
afterAll(async () => {
  await client.close();
  const exit = await app?.stop();
  expect(exit).toBe('SIGTERM');
});

describe('sample app (separate process, real broker)', () => {
  it('publishes an order over HTTP and records it through @BabelHandler', async () => {
    const id = await post('/orders', { order_id: 'T-1', sku: 'BOOK', quantity: 2 });
    const handled = await waitFor('the order', () => handledById(id));
    expect(handled).toMatchObject({
      urn: 'urn:babel:orders:created',
      attempts: 0,
      data: { order_id: 'T-1', sku: 'BOOK', quantity: 2 },
    });
  });

  it('retries the payment twice, then handles it', async () => {
    const id = await post('/payments', { order_id: 'T-1', amount: 9.99 });
    const handled = await waitFor('the payment', () => handledById(id));
    expect(handled.attempts).toBe(2);
  });

  it('holds a delayed order back until its time', async () => {
    const sent = Date.now();
    const id = await post('/orders?delayMs=1500', { order_id: 'T-2', sku: 'PEN', quantity: 1 });
    const handled = await waitFor('the delayed order', () => handledById(id));
    expect(handled.handledAt - sent).toBeGreaterThanOrEqual(1500);
  });

  it('dead-letters an order that always fails, with the full record on <topic>.dlq', async () => {
    const id = await post('/orders', { order_id: 'T-3', sku: 'OUT-OF-STOCK', quantity: 1 });
    const record = await waitFor('the dead letter', () => deadLetterFor(id));
    expect(record.body).toMatchObject({
      job: 'urn:babel:orders:created',
      data: { order_id: 'T-3', sku: 'OUT-OF-STOCK', quantity: 1 },
      meta: { id, queue: topic, lang: 'node', schema_version: 1 },
      attempts: 3,
      dead_letter: {
        reason: 'failed',
        error: 'sku OUT-OF-STOCK cannot be reserved',
        exception: 'Error',
        original_queue: topic,
        attempts: 3,
        lang: 'node',
      },
    });
    expect(record.properties).toMatchObject({
      'bq-job': 'urn:babel:orders:created',
      'bq-attempts': '3',
      'bq-dead-letter-reason': 'failed',
      'bq-message-id': id,
    });
    expect(await handledById(id)).toBeUndefined();
  });

  it('dead-letters an order the validation pipe rejects, with the pipe’s message', async () => {
    const id = await post('/orders', { order_id: 'T-4', sku: 'BOOK', quantity: -1 });
    const record = await waitFor('the dead letter', () => deadLetterFor(id));
    expect(record.body!.dead_letter).toMatchObject({
      reason: 'failed',
      exception: 'BadRequestException',
      error: 'quantity must be a positive integer, got -1',
    });
  });

  it('writes poison bytes to <topic>.dlq unchanged', async () => {
    const id = randomUUID();
    const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x7b]);
    const producer = await client.createProducer({ topic });
    await producer.send({ data: bytes, properties: { 'bq-job': 'urn:babel:orders:created', 'bq-message-id': id } });
    await producer.close();
    const record = await waitFor('the poison record', () => deadLetterFor(id));
    expect(Buffer.from(record.payload, 'base64').equals(bytes)).toBe(true);
    expect(record.body).toBeNull();
    expect(record.properties).toMatchObject({
      'bq-dead-letter-reason': 'poison',
      'bq-dead-letter-attempts': '1',
      'bq-dead-letter-lang': 'node',
    });
  });

  it('dead-letters an unknown URN with reason unknown_urn, and acknowledges a future schema version at the gate', async () => {
    const producer = await client.createProducer({ topic });
    const unknown = EnvelopeCodec.make('urn:babel:orders:cancelled', {}, { queue: topic });
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(unknown), properties: pulsarProperties(unknown) });
    const future = EnvelopeCodec.make(
      'urn:babel:orders:created',
      { order_id: 'T-5', sku: 'X', quantity: 1 },
      { queue: topic },
    );
    await producer.send({
      data: EnvelopeCodec.encodeToBuffer(future),
      properties: { ...pulsarProperties(future), 'bq-schema-version': '2' },
    });
    await producer.close();
    const record = await waitFor('the unknown-URN record', () => deadLetterFor(unknown.meta.id));
    expect(record.body!.dead_letter).toMatchObject({ reason: 'unknown_urn', attempts: 3 });
    const rejected = await waitFor('the gate rejection', async () =>
      (await get<{ rejected: Array<{ messageId: string; error: string }> }>('/settlements')).rejected.find(
        (r) => r.messageId === future.meta.id,
      ),
    );
    expect(rejected.error).toMatch(/bq-schema-version "2"/);
    expect(await handledById(future.meta.id)).toBeUndefined();
    expect(await deadLetterFor(future.meta.id)).toBeUndefined();
  });

  it('dead-letters an order of an unregistered customer; registered and redriven, it is handled as it was', async () => {
    const id = await post('/orders', { order_id: 'T-6', sku: 'BOOK', quantity: 1, customer: 'C-6' });
    const record = await waitFor('the dead letter', () => deadLetterFor(id));
    expect(record.body!.dead_letter).toMatchObject({ reason: 'failed', error: 'customer C-6 is not registered' });
    expect(await handledById(id)).toBeUndefined();

    const registered = await fetch(`${app.base}/customers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'C-6' }),
    });
    expect(registered.status).toBe(201);
    const response = await fetch(`${app.base}/dead-letters/redrive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customer: 'C-6' }),
    });
    const report = (await response.json()) as { redriven: number; items: Array<{ outcome: string; id: string }> };
    expect(report.redriven).toBe(1);
    expect(report.items.filter((item) => item.outcome === 'redriven').map((item) => item.id)).toEqual([id]);
    const handled = await waitFor('the redriven order', () => handledById(id));
    expect(handled).toMatchObject({
      traceId: record.body!.trace_id,
      attempts: 0,
      replay: false,
      data: { order_id: 'T-6', customer: 'C-6' },
    });
  });
});

describe('npm run demo', () => {
  it('settles every scripted message, runs the redrive loop as expected and exits 0', () => {
    const run = spawnSync('npm', ['run', '--silent', 'demo', '--', '--client', testClientKind()], {
      cwd: root,
      env: { ...process.env, PULSAR_WEB_URL: webUrl() },
      encoding: 'utf8',
      timeout: 200_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    if (run.status !== 0) throw new Error(`npm run demo exited with ${run.status}:\n${output.slice(-6000)}`);
    expect(output).toMatch(
      /14 of 14 checks as expected \(10 messages settled, 4 redrive steps\); app stopped \(graceful SIGTERM shutdown\)/,
    );
    expect(output).toContain(onNative() ? 'client: native pulsar-client' : 'client: built-in WebSocket client');
    for (const outcome of [
      'handled after 2 retries',
      'handled after the delay',
      'dead-lettered: poison',
      'dead-lettered: unknown_urn',
      'acknowledged by the schema gate',
      // The redrive loop: the fix, BabelQueueRedrive, the order handled, and what stayed in the DLQ.
      'registered',
      'redriven 1, skipped 3, kept 1',
      'handled, same meta.id and trace_id',
      'would redrive 2, skipped 1, kept 1',
    ]) {
      expect(output).toContain(outcome);
    }
    expect(output).not.toContain('UNEXPECTED');
  });
});
