// The babelqueue-pulsar verbs (list, peek, stats, purge, redrive) against the real broker, on the client under
// test: progress over a poison head, read-only views, purge, validation and exit codes.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { type PulsarConsumer, type PulsarProducerConfig } from '../../../lib/pulsar/index.js';
import { EXIT, runCli } from '../../../lib/cli/run-cli.js';
import { VERBS } from '../../../lib/cli/usage.js';
import { messageIdText } from '../../../lib/pulsar/message-id.js';
import {
  backlog,
  expectNothing,
  loadNative,
  nativeServiceUrl,
  newClient,
  receiveN,
  serviceUrl,
  uniqueTopic,
  waitFor,
  webUrl,
} from '../../support/broker.js';
import { publishDeadLetter, publishPoison, subscriptionsOf, topicKnown } from '../../support/dead-letters.js';
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

/** Runs the CLI in-process with the service URL of the client under test; returns the exit code and output. */
async function cli(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    {
      BABELQUEUE_PULSAR_SERVICE_URL: serviceUrl(),
    },
  );
  return { code, out, err };
}

const envelope = (topic: string, id: string, urn = 'urn:babel:orders:created') =>
  EnvelopeCodec.make(urn, { id }, { queue: topic, id });

/** A DLQ that exists and holds the redrive subscription, as the module leaves it. */
async function createDlq(dlq: string): Promise<void> {
  const consumer = await client.subscribe({ topic: dlq, subscription: 'babelqueue-redrive' });
  await consumer.close();
}

test('redrive --max 1 over a DLQ whose first record is poison moves forward on every run', async () => {
  const topic = uniqueTopic('progress');
  const dlq = `${topic}.dlq`;
  await createDlq(dlq);
  const target = await listen(topic);
  await publishPoison(client, dlq);
  await publishDeadLetter(client, dlq, envelope(topic, 'p-1'), { reason: 'failed' });
  await publishDeadLetter(client, dlq, envelope(topic, 'p-2'), { reason: 'failed' });

  const first = await cli('redrive', '--topic', dlq, '--max', '1', '--json');
  expect(first.code).toBe(EXIT.ok);
  const report = JSON.parse(first.out.join('\n')) as { items: Array<{ outcome: string; restoredAs?: string }> };
  expect(report.items).toEqual([expect.objectContaining({ outcome: 'kept', restoredAs: expect.any(String) })]);

  const second = await cli('redrive', '--topic', dlq, '--max', '1');
  expect(second.out[0]).toMatch(/^redriven .* id="p-1" /);
  const third = await cli('redrive', '--topic', dlq, '--max', '1');
  expect(third.out[0]).toMatch(/^redriven .* id="p-2" /);
  const ids = (await receiveN(target, 2)).map((m) => JSON.parse(m.getData().toString()).meta.id as string);
  expect(ids).toEqual(['p-1', 'p-2']);

  // The poison record is still there, byte for byte with its properties, and a full run ends on it.
  const list = await cli('list', '--topic', dlq, '--json');
  const listing = JSON.parse(list.out.join('\n')) as { records: Array<Record<string, unknown>> };
  expect(listing.records).toEqual([
    expect.objectContaining({ reason: 'poison', body: 'not json {', error: 'Unexpected end of JSON input' }),
  ]);
  const all = await cli('redrive', '--topic', dlq);
  expect(all.out.at(-1)).toMatch(
    /^done: read 1, redriven 0, .* kept \(unparseable or no queue\) 1, refused \(target not allowed\) 0, failed 0$/,
  );
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1);
});

test('records dead-lettered before any tool ran are kept for it: the module creates the redrive subscription', async () => {
  const topic = uniqueTopic('kept-early');
  const dlq = `${topic}.dlq`;
  const urn = 'urn:babel:dlq:always-fails';

  @Controller()
  class AlwaysFails {
    @BabelHandler(urn)
    fail() {
      throw new TypeError('still broken');
    }
  }
  const service = await startService([AlwaysFails], { client, topics: topic, maxAttempts: 1 });
  try {
    // Before any record and before any operator tool: the subscription that holds the records is there.
    expect(await subscriptionsOf(dlq)).toContain('babelqueue-redrive');
    const producer = await client.createProducer({ topic });
    const sent = envelope(topic, 'early-1', urn);
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(sent), properties: { 'bq-job': urn } });
    await producer.close();
    await waitFor('the dead-letter record', async () => (await backlog(dlq, 'babelqueue-redrive')) === 1);
  } finally {
    await service.close();
  }
  const peek = await cli('peek', '--topic', dlq);
  expect(peek.code).toBe(EXIT.ok);
  const text = peek.out.join('\n');
  expect(text).toMatch(/meta\.id: +"early-1"/);
  expect(text).toMatch(/reason: +"failed"/);
  expect(text).toMatch(/attempts: +1/);
  expect(text).toMatch(/error: +"still broken"/);
  expect(text).toMatch(/exception: +"TypeError"/);
  expect(text).toMatch(new RegExp(`original queue: +"${topic}"`));
  expect(text).toMatch(new RegExp(`consumed from: +"persistent://public/default/${topic}"`));
  expect(text).toMatch(/"dead_letter": \{/);
});

test('list, stats and peek read without changing the DLQ; --json carries every field', async () => {
  const topic = uniqueTopic('browse');
  const dlq = `${topic}.dlq`;
  await createDlq(dlq);
  const hourAgo = Date.now() - 3_600_000;
  await publishDeadLetter(client, dlq, envelope(topic, 'b-1'), {
    reason: 'failed',
    error: new RangeError('too big'),
    failedAt: hourAgo,
  });
  await publishDeadLetter(client, dlq, envelope(topic, 'b-2', 'urn:babel:orders:unknown'), { reason: 'unknown_urn' });
  await publishPoison(client, dlq);

  const list = await cli('list', '--topic', dlq);
  expect(list.code).toBe(EXIT.ok);
  expect(list.out).toHaveLength(4);
  expect(list.out[0]).toMatch(
    new RegExp(
      `^\\(\\d+,\\d+,-?\\d+,-?\\d+\\) id="b-1" urn="urn:babel:orders:created" reason="failed" attempts=3 age=(59m|1h) \\S+ ` +
        `from="${topic}" exception="RangeError" error="too big"$`,
    ),
  );
  expect(list.out[3]).toBe(`3 record(s) selected of 3 read from persistent://public/default/${dlq}`);

  const json = JSON.parse((await cli('list', '--topic', dlq, '--json', '--reason', 'failed')).out.join('\n')) as {
    records: Array<Record<string, unknown>>;
  };
  expect(json.records).toEqual([
    expect.objectContaining({
      messageId: expect.stringMatching(/^\(\d+,\d+,-?\d+,-?\d+\)$/),
      id: 'b-1',
      urn: 'urn:babel:orders:created',
      reason: 'failed',
      attempts: 3,
      error: 'too big',
      exception: 'RangeError',
      originalQueue: topic,
      failedAt: hourAgo,
      ageMs: expect.any(Number),
    }),
  ]);
  expect(json.records[0]!.ageMs as number).toBeGreaterThanOrEqual(3_600_000);

  const older = await cli('list', '--topic', dlq, '--older-than', '30m', '--json');
  expect((JSON.parse(older.out.join('\n')) as { records: unknown[] }).records).toHaveLength(1);

  const stats = await cli('stats', '--topic', dlq, '--json');
  expect(JSON.parse(stats.out.join('\n'))).toMatchObject({
    total: 3,
    byReason: { failed: 1, unknown_urn: 1, poison: 1 },
    byUrn: { 'urn:babel:orders:created': 1, 'urn:babel:orders:unknown': 1, '(none)': 1 },
    oldestFailedAt: hourAgo,
  });
  const statsText = await cli('stats', '--topic', dlq);
  expect(statsText.out[0]).toBe(`persistent://public/default/${dlq}: 3 record(s)`);

  const peek = await cli('peek', '--topic', dlq, '--urn', 'urn:babel:orders:unknown', '--json');
  expect(JSON.parse(peek.out.join('\n')).records).toEqual([expect.objectContaining({ id: 'b-2' })]);
  // Nothing was acknowledged or moved.
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(3);
});

test('purge is a dry run unless --yes, and then acknowledges only the selected records', async () => {
  const topic = uniqueTopic('purge');
  const dlq = `${topic}.dlq`;
  await createDlq(dlq);
  await publishPoison(client, dlq);
  await publishDeadLetter(client, dlq, envelope(topic, 'keep-1'), { reason: 'failed' });
  await publishPoison(client, dlq, 'also not json');

  const dry = await cli('purge', '--topic', dlq, '--reason', 'poison');
  expect(dry.code).toBe(EXIT.ok);
  expect(dry.out.filter((l) => l.startsWith('would purge'))).toHaveLength(2);
  expect(dry.out.at(-1)).toMatch(/^dry run, nothing removed: 2 of 3 read would be purged; add --yes/);
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(3);

  const real = await cli('purge', '--topic', dlq, '--reason', 'poison', '--yes');
  expect(real.out.at(-1)).toBe('done: purged 2 of 3 read');
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1);
  const left = JSON.parse((await cli('list', '--topic', dlq, '--json')).out.join('\n')) as {
    records: Array<{ id: string }>;
  };
  expect(left.records.map((r) => r.id)).toEqual(['keep-1']);
});

test('--help exits 0 on every command; usage errors exit 2 and name what is allowed', async () => {
  for (const verb of VERBS) {
    const help = await cli(verb, '--help');
    expect([verb, help.code]).toEqual([verb, EXIT.ok]);
    expect(help.out.join('\n')).toMatch(new RegExp(`^usage: babelqueue-pulsar ${verb} `));
    expect(help.out.join('\n')).toMatch(/exit codes: 0 ok, 1 .*2 usage error, 3 cannot reach the broker/);
  }
  expect((await cli('--help')).code).toBe(EXIT.ok);

  const bogus = await cli('redrive', '--topic', 'orders.dlq', '--reason', 'bogus');
  expect(bogus.code).toBe(EXIT.usage);
  expect(bogus.err[0]).toMatch(/unknown reason "bogus": use one of failed, unknown_urn, poison/);
  for (const verb of VERBS) expect((await cli(verb, '--topic', 'orders.dlq', '--reason', 'bogus')).code).toBe(2);

  const blank = await cli('redrive', '--topic', '   ');
  expect(blank.code).toBe(EXIT.usage);
  expect(blank.err[0]).toMatch(/Invalid topic name/);
  expect((await cli('list', '--topic', 'orders.dlq', '--older-than', 'soon')).code).toBe(EXIT.usage);
  expect((await cli('purge', '--topic', 'orders.dlq', '--yes', '--dry-run')).code).toBe(EXIT.usage);
  expect((await cli('list', '--topic', 'orders.dlq', '--bypass')).code).toBe(EXIT.usage);
  expect((await cli('nope')).code).toBe(EXIT.usage);
});

test('a malformed topic name is refused before connecting, the same way on both clients, and not created', async () => {
  const malformed = 'persistent://public/default/bad//x.dlq';
  const result = await cli('redrive', '--topic', malformed);
  expect(result.code).toBe(EXIT.usage);
  expect(result.err[0]).toBe(
    `babelqueue-pulsar redrive: Invalid topic name "${malformed}": expected exactly tenant/namespace/topic after ` +
      'the domain. Use a short name ("orders"), "tenant/namespace/topic" or a full name ' +
      '("persistent://tenant/namespace/topic").',
  );
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default`);
  const topics = (await response.json()) as string[];
  expect(topics.filter((t) => t.includes('bad/'))).toEqual([]);
});

test('a dead-letter topic that does not exist is reported with exit 4 and not created', async () => {
  const dlq = `${uniqueTopic('missing')}.dlq`;
  for (const verb of VERBS) {
    const result = await cli(verb, '--topic', dlq, ...(verb === 'purge' ? ['--yes'] : []));
    expect([verb, result.code]).toEqual([verb, EXIT.missingTopic]);
    expect(result.err[0]).toMatch(/does not exist \(nothing was created\)/);
  }
  expect(await topicKnown(dlq)).toBe(false);
});

test('a broker that cannot be reached is exit 3', async () => {
  const result = await cli('list', '--topic', 'orders.dlq', '--service-url', 'http://127.0.0.1:1');
  expect(result.code).toBe(EXIT.unreachable);
  expect(result.err[0]).toMatch(/cannot reach the broker at http:\/\/127\.0\.0\.1:1/);
  // The native client's port down while the admin API answers: the subscribe fails to connect.
  const native = await cli(
    'stats',
    '--topic',
    'orders.dlq',
    '--service-url',
    'pulsar://127.0.0.1:1',
    '--admin-url',
    'http://127.0.0.1:1',
  );
  expect(native.code).toBe(EXIT.unreachable);
});

test('redrive puts back what it does not redrive byte for byte, and a dry run changes nothing', async () => {
  const topic = uniqueTopic('restore');
  const dlq = `${topic}.dlq`;
  await createDlq(dlq);
  const target = await listen(topic);
  await publishDeadLetter(client, dlq, envelope(topic, 'r-skip', 'urn:babel:orders:other'), { reason: 'failed' });
  await publishDeadLetter(client, dlq, envelope(topic, 'r-go'), { reason: 'failed' });
  const before = JSON.parse((await cli('list', '--topic', dlq, '--json')).out.join('\n')) as {
    records: Array<{ body: string; properties: Record<string, string>; messageId: string }>;
  };

  const dry = await cli('redrive', '--topic', dlq, '--urn', 'urn:babel:orders:created', '--dry-run', '--max', '1');
  expect(dry.out[0]).toMatch(/^skipped \(selector\) .* id="r-skip"/);
  const same = JSON.parse((await cli('list', '--topic', dlq, '--json')).out.join('\n')) as typeof before;
  expect(same.records.map((r) => r.messageId)).toEqual(before.records.map((r) => r.messageId));

  const run = await cli('redrive', '--topic', dlq, '--urn', 'urn:babel:orders:created');
  expect(run.out[0]).toMatch(/^skipped \(selector\) .* id="r-skip" .*\(put back as \(/);
  expect(run.out[1]).toMatch(/^redriven .* id="r-go"/);
  expect(run.out[2]).toMatch(/^done: read 2, redriven 1, would redrive 0, skipped 1/);
  await receiveN(target, 1);
  await expectNothing(target, 300);
  const after = JSON.parse((await cli('list', '--topic', dlq, '--json')).out.join('\n')) as typeof before;
  expect(after.records).toHaveLength(1);
  expect(after.records[0]!.body).toBe(before.records[0]!.body);
  expect(after.records[0]!.properties).toEqual(before.records[0]!.properties);
  expect(after.records[0]!.messageId).not.toBe(before.records[0]!.messageId);
});

/**
 * Records in one Pulsar batch (one entry), as a busy server's dead-letter producer writes them. Written with the
 * native client on either run: only it can hold a batch open until it is full, so the batch is certain.
 */
async function publishBatch(dlq: string, records: Array<{ id: string; reason: string; queue: string }>) {
  const native = new (loadNative().Client as unknown as new (config: object) => PulsarClientLike)({
    serviceUrl: nativeServiceUrl(),
  });
  const producer = await native.createProducer({
    topic: dlq,
    batchingEnabled: true,
    batchingMaxMessages: records.length,
    batchingMaxPublishDelayMs: 10_000,
  } as PulsarProducerConfig);
  const ids = await Promise.all(
    records.map(({ id, reason, queue }) =>
      producer.send({
        data: EnvelopeCodec.encodeToBuffer(EnvelopeCodec.make('urn:babel:orders:created', {}, { id, queue })),
        properties: { 'bq-dead-letter-reason': reason },
      }),
    ),
  );
  await producer.close();
  await native.close();
  const entries = new Set(ids.map((id) => messageIdText(id!).replace(/,-?\d+\)$/, '')));
  expect(entries.size).toBe(1); // the precondition: one batch
}

const listed = async (dlq: string) =>
  (
    JSON.parse((await cli('list', '--topic', dlq, '--json')).out.join('\n')) as { records: Array<{ id: string }> }
  ).records.map((r) => r.id);

test('purge and redrive --max inside one Pulsar batch: nothing acknowledged comes back, nothing else is lost', async () => {
  const topic = uniqueTopic('batched');
  const dlq = `${topic}.dlq`;
  await createDlq(dlq);
  await publishBatch(dlq, [
    { id: 'b-1', reason: 'failed', queue: topic },
    { id: 'b-2', reason: 'poison', queue: topic },
    { id: 'b-3', reason: 'failed', queue: topic },
  ]);
  const purge = await cli('purge', '--topic', dlq, '--reason', 'poison', '--yes');
  expect(purge.out.at(-1)).toBe('done: purged 1 of 3 read; put back 2 that shared a Pulsar batch with a purged one');
  expect(await listed(dlq)).toEqual(['b-1', 'b-3']);

  const other = `${topic}-c.dlq`;
  await createDlq(other);
  const target = await listen(topic);
  await publishBatch(other, [
    { id: 'c-1', reason: 'failed', queue: topic },
    { id: 'c-2', reason: 'failed', queue: topic },
    { id: 'c-3', reason: 'failed', queue: topic },
  ]);
  // A DLQ of another name: its records' topic is allowed by the operator.
  const run = await cli('redrive', '--topic', other, '--max', '1', '--allow-target', topic);
  expect(run.out[0]).toMatch(/^redriven .* id="c-1" /);
  expect(run.out.filter((l) => /same Pulsar batch/.test(l))).toHaveLength(2);
  expect((await receiveN(target, 1)).map((m) => JSON.parse(m.getData().toString()).meta.id)).toEqual(['c-1']);
  await expectNothing(target, 300);
  expect(await listed(other)).toEqual(['c-2', 'c-3']);
});

test('a write that fails is exit 1 and leaves the record where it was', async () => {
  const topic = uniqueTopic('write-fails');
  const dlq = `${topic}.dlq`;
  await createDlq(dlq);
  await publishDeadLetter(client, dlq, envelope(topic, 'w-1'), { reason: 'failed' });
  const before = await listed(dlq);
  // A namespace that does not exist: the broker refuses the producer.
  const result = await cli('redrive', '--topic', dlq, '--to', 'public/no-such-namespace/orders');
  expect(result.code).toBe(EXIT.writeFailed);
  expect(result.out[0]).toMatch(
    /^FAILED .* id="w-1" .*publish to persistent:\/\/public\/no-such-namespace\/orders failed/,
  );
  expect(await listed(dlq)).toEqual(before);
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1);
});
