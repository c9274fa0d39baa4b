// Redrive through the real broker, on the client under test: the service and the CLI.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import {
  BabelHandler,
  BabelQueueRedrive,
  EnvelopeCodec,
  type Envelope,
  type PulsarClientLike,
  type PulsarMessage,
} from '../../../lib/index.js';
import { deadLetterProperties, deadLetterRecord } from '../../../lib/envelope/index.js';
import { pulsarProperties, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { backlog, expectNothing, newClient, receiveN, serviceUrl, uniqueTopic } from '../../support/broker.js';
import { startService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

let client: PulsarClientLike;
const consumers: PulsarConsumer[] = [];
beforeAll(() => {
  client = newClient();
});
afterAll(async () => {
  await Promise.allSettled(consumers.map((c) => c.close()));
  await client.close();
});

async function listen(topic: string): Promise<PulsarConsumer> {
  const consumer = await client.subscribe({ topic, subscription: 'test', subscriptionInitialPosition: 'Earliest' });
  consumers.push(consumer);
  return consumer;
}

/** A dead-letter record as the server writes it (docs/contract.md#dead-letter-records), published to the DLQ. */
async function deadLetter(dlq: string, envelope: Envelope, reason: 'failed' | 'unknown_urn'): Promise<void> {
  const record = deadLetterRecord(envelope, { reason, error: new Error('boom'), attempts: 3, originalQueue: 'x' });
  const producer = await client.createProducer({ topic: dlq });
  await producer.send({
    data: EnvelopeCodec.encodeToBuffer(record),
    properties: {
      ...pulsarProperties(record),
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      ...deadLetterProperties({ reason, error: 'boom', attempts: 3, originalQueue: 'x', failedAt: 1 }),
    },
  });
  await producer.close();
}

async function poison(dlq: string): Promise<void> {
  const producer = await client.createProducer({ topic: dlq });
  await producer.send({ data: Buffer.from('not json {'), properties: { 'bq-dead-letter-reason': 'poison' } });
  await producer.close();
}

/** Creates the redrive subscription before records arrive, as an operator's first `--dry-run` would. */
async function prepareDlq(dlq: string): Promise<void> {
  const service = new BabelQueueRedrive(client);
  const result = await service.run({ topic: dlq, dryRun: true, idleTimeoutMs: 200 });
  expect(result.read).toBe(0);
}

const full = (topic: string): string => `persistent://public/default/${topic}`;

function decoded(message: PulsarMessage): Record<string, unknown> {
  return JSON.parse(message.getData().toString()) as Record<string, unknown>;
}

test('redrives failed records to their original queue, reset, and leaves the rest in the DLQ', async () => {
  const topic = uniqueTopic('redrive');
  const dlq = `${topic}.dlq`;
  await prepareDlq(dlq);
  const target = await listen(topic);

  // A number beyond 2^53 must come back exactly (docs/contract.md#retries).
  const exact = EnvelopeCodec.decode(
    `{"job":"urn:babel:orders:created","trace_id":"trace-1","data":{"amount":12345678901234567890,"ratio":1.0},` +
      `"meta":{"id":"id-1","queue":"${topic}","lang":"php","schema_version":1,"created_at":1},"attempts":0,"x_extra":true}`,
  ).envelope as Envelope;
  const second = EnvelopeCodec.make('urn:babel:orders:created', { n: 2 }, { queue: topic, id: 'id-2' });
  const unknown = EnvelopeCodec.make('urn:babel:orders:unknown', { n: 3 }, { queue: topic, id: 'id-3' });
  await deadLetter(dlq, exact, 'failed');
  await poison(dlq);
  await deadLetter(dlq, unknown, 'unknown_urn');
  await deadLetter(dlq, second, 'failed');

  const lines: string[] = [];
  const result = await new BabelQueueRedrive(client).run({
    topic: dlq,
    reason: 'failed',
    onItem: (item) => lines.push(item.outcome),
  });
  expect(lines).toEqual(['redriven', 'kept', 'skipped', 'redriven']);
  expect(result).toMatchObject({ read: 4, redriven: 2, skipped: 1, kept: 1, failed: 0 });
  expect(result.items[0]).toMatchObject({ id: 'id-1', traceId: 'trace-1', reason: 'failed', to: full(topic) });

  const [first, again] = await receiveN(target, 2);
  expect(first!.getData().toString()).toBe(
    `{"job":"urn:babel:orders:created","trace_id":"trace-1","data":{"amount":12345678901234567890,"ratio":1.0},` +
      `"meta":{"id":"id-1","queue":"${topic}","lang":"php","schema_version":1,"created_at":1},"attempts":0,"x_extra":true}`,
  );
  const properties = first!.getProperties();
  expect(properties).toMatchObject({
    'bq-attempts': '0',
    'bq-message-id': 'id-1',
    'bq-trace-id': 'trace-1',
    'bq-job': 'urn:babel:orders:created',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  });
  expect(Object.keys(properties).filter((k) => k.startsWith('bq-dead-letter-'))).toEqual([]);
  expect(properties['bq-replay-bypass']).toBeUndefined();
  const body = decoded(again!);
  expect(body).toMatchObject({ trace_id: second.trace_id, data: { n: 2 }, attempts: 0, meta: { id: 'id-2' } });
  expect(body).not.toHaveProperty('dead_letter');

  // The skipped and the unparseable record are still there, for the next run.
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(2);
});

test('a dry run publishes and acknowledges nothing; the CLI redrives to --to with --bypass', async () => {
  const topic = uniqueTopic('redrive-cli');
  const dlq = `${topic}.dlq`;
  const sandbox = `${topic}.sandbox`;
  await prepareDlq(dlq);
  const original = await listen(topic);
  const sandboxed = await listen(sandbox);
  const envelope = EnvelopeCodec.make('urn:babel:orders:created', { n: 1 }, { queue: topic, id: 'cli-1' });
  await deadLetter(dlq, envelope, 'failed');
  await poison(dlq);

  const out: string[] = [];
  const output = { out: (line: string) => out.push(line), err: (line: string) => out.push(line) };
  const env = { BABELQUEUE_PULSAR_SERVICE_URL: serviceUrl() };
  expect(await runCli(['redrive', '--topic', dlq, '--dry-run'], output, env)).toBe(0);
  expect(out[0]).toMatch(
    new RegExp(
      `^would redrive dlq=\\S+ id="cli-1" urn="urn:babel:orders:created" reason="failed" -> "${full(topic)}"$`,
    ),
  );
  expect(out[1]).toMatch(/^kept in DLQ .*not a BabelQueue envelope/);
  expect(out[2]).toMatch(/^dry run, nothing published or acknowledged: read 2, redriven 0, would redrive 1/);
  await expectNothing(original, 500);
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(2);

  out.length = 0;
  expect(
    await runCli(
      ['redrive', '--topic', dlq, '--to', sandbox, '--bypass', '--urn', 'urn:babel:orders:created'],
      output,
      env,
    ),
  ).toBe(0);
  expect(out[0]).toMatch(new RegExp(`^redriven .* -> "${full(sandbox)}" \\(bypass\\)$`));
  expect(out[2]).toMatch(/^done: read 2, redriven 1/);
  const [copy] = await receiveN(sandboxed, 1);
  expect(copy!.getProperties()['bq-replay-bypass']).toBe('1');
  expect(decoded(copy!)).toMatchObject({ meta: { id: 'cli-1' }, trace_id: envelope.trace_id, attempts: 0 });
  await expectNothing(original, 300);
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1); // the poison record
});

test('the CLI reports usage errors with exit code 2', async () => {
  const out: string[] = [];
  const output = { out: (line: string) => out.push(line), err: (line: string) => out.push(line) };
  expect(await runCli(['redrive'], output, {})).toBe(2);
  expect(out.join('\n')).toMatch(/--topic is required/);
  expect(await runCli(['redrive', '--topic', 'a.dlq', '--max', '0'], output, {})).toBe(2);
  expect(await runCli(['redrive', '--topic', 'a.dlq', '--id', ' '], output, {})).toBe(2);
  expect(out.join('\n')).toMatch(/--id must not be blank/);
  expect(await runCli(['nope'], output, {})).toBe(2);
});

test('the CLI redrives only the records named by --id', async () => {
  const topic = uniqueTopic('redrive-id');
  const dlq = `${topic}.dlq`;
  await prepareDlq(dlq);
  const target = await listen(topic);
  for (const id of ['id-a', 'id-b', 'id-c'])
    await deadLetter(dlq, EnvelopeCodec.make('urn:babel:orders:created', { id }, { queue: topic, id }), 'failed');
  const out: string[] = [];
  const output = { out: (line: string) => out.push(line), err: (line: string) => out.push(line) };
  const env = { BABELQUEUE_PULSAR_SERVICE_URL: serviceUrl() };
  expect(await runCli(['redrive', '--topic', dlq, '--id', 'id-a', '--id', 'id-c'], output, env)).toBe(0);
  const copies = await receiveN(target, 2);
  expect(copies.map((copy) => (decoded(copy).meta as { id: string }).id).sort()).toEqual(['id-a', 'id-c']);
  await expectNothing(target, 300);
  expect(out.filter((line) => line.startsWith('skipped'))).toEqual([expect.stringContaining('id="id-b"')]);
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1);
});

test('ends when a redriven record fails again: the record that came back is left for the next run', async () => {
  const topic = uniqueTopic('redrive-loop');
  const dlq = `${topic}.dlq`;
  await prepareDlq(dlq);
  const urn = 'urn:babel:redrive:always-fails';

  @Controller()
  class AlwaysFails {
    @BabelHandler(urn)
    fail() {
      throw new Error('still broken');
    }
  }

  // One delivery, then the dead-letter topic: every redriven copy is dead-lettered again at once.
  const service = await startService([AlwaysFails], { client, topics: topic, maxAttempts: 1 });
  try {
    const envelope = EnvelopeCodec.make(urn, { n: 1 }, { queue: topic, id: 'loop-1' });
    await deadLetter(dlq, envelope, 'failed');
    const runner = new BabelQueueRedrive(client);
    // A wide idle window: the copy is handled and dead-lettered again while this run still reads.
    const first = await runner.run({ topic: dlq, idleTimeoutMs: 3000 });
    expect(first.redriven).toBe(1);
    // One message-id form on both clients (the WebSocket API's own ids are base64).
    expect(first.items[0]!.dlqMessageId).toMatch(/^\(\d+,\d+,-?\d+,-?\d+\)$/);
    expect(first.kept).toBe(1);
    expect(first.items[1]).toMatchObject({ id: 'loop-1', outcome: 'kept', detail: expect.stringMatching(/again/) });
    // Still there for the next run, which redrives it once more (and ends again).
    const second = await runner.run({ topic: dlq, idleTimeoutMs: 3000 });
    expect(second.items[0]).toMatchObject({ id: 'loop-1', outcome: 'redriven' });
    expect(second.redriven).toBe(1);
  } finally {
    await service.close();
  }
});
