// A dead-letter record is the publisher's words: its meta.queue (the body's original_queue) must not choose
// where a redrive writes with the operator's credentials. Through the real broker, on the client under test:
// the server records the topic it consumed, and a record naming any other topic is refused by name (service,
// dry run, CLI) and put back, unless the operator allows that target.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { BabelHandler, BabelQueueRedrive, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { deadLetterProperties, deadLetterRecord } from '../../../lib/envelope/index.js';
import { pulsarProperties, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { backlog, expectNothing, newClient, receiveN, serviceUrl, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService } from '../../support/nest-app.js';

jest.setTimeout(90_000);

const URN = 'urn:babel:redrive:forged-queue';
const full = (topic: string): string => `persistent://public/default/${topic}`;

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

@Controller()
class AlwaysFails {
  @BabelHandler(URN)
  fail(): void {
    throw new Error('refused by the handler');
  }
}

test("the server's record goes back to the topic it was consumed from, whatever meta.queue says", async () => {
  const topic = uniqueTopic('redrive-own');
  const victim = `${topic}-payments`;
  const dlq = `${topic}.dlq`;
  const service = await startService([AlwaysFails], { client, topics: topic, maxAttempts: 1 });
  const victimReader = await listen(victim);
  try {
    // A publisher names another topic as its queue.
    const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: full(victim), id: 'forged-1' });
    const producer = await client.createProducer({ topic });
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
    await producer.close();
    await waitFor('the dead-letter record', async () => (await backlog(dlq, 'babelqueue-redrive')) === 1);
    await service.close();

    const plan = await new BabelQueueRedrive(client).run({ topic: dlq, dryRun: true });
    expect(plan.items).toEqual([expect.objectContaining({ id: 'forged-1', outcome: 'planned', to: full(topic) })]);
    const own = await listen(topic);
    const done = await new BabelQueueRedrive(client).run({ topic: dlq });
    expect(done).toMatchObject({ redriven: 1, refused: 0 });
    const [copy] = await receiveN(own, 1);
    expect(JSON.parse(copy!.getData().toString()).meta.id).toBe('forged-1');
    await expectNothing(victimReader, 500);
  } finally {
    await service.close();
  }
});

test('a record naming a topic outside the allowed targets is refused by name and put back; --allow-target lets it go', async () => {
  const topic = uniqueTopic('redrive-refuse');
  const victim = `${topic}-payments`;
  const dlq = `${topic}.dlq`;
  await new BabelQueueRedrive(client).run({ topic: dlq, dryRun: true, idleTimeoutMs: 200 });
  const victimReader = await listen(victim);
  // Written straight to the DLQ (another SDK, an older version, anyone with write access): no recorded topic,
  // only the body's original_queue, which is meta.queue.
  const envelope = EnvelopeCodec.make(URN, { n: 2 }, { queue: full(victim), id: 'forged-2' });
  const record = deadLetterRecord(envelope, {
    reason: 'failed',
    error: new Error('x'),
    attempts: 3,
    originalQueue: topic,
  });
  const producer = await client.createProducer({ topic: dlq });
  await producer.send({
    data: EnvelopeCodec.encodeToBuffer(record),
    properties: {
      ...pulsarProperties(record),
      ...deadLetterProperties({ reason: 'failed', error: 'x', attempts: 3, originalQueue: topic, failedAt: 1 }),
    },
  });
  await producer.close();

  // The service: refused, by name, in the plan and in a real run, and the record stays.
  const plan = await new BabelQueueRedrive(client).run({ topic: dlq, dryRun: true });
  expect(plan).toMatchObject({ planned: 0, refused: 1 });
  expect(plan.items[0]).toMatchObject({
    id: 'forged-2',
    outcome: 'refused',
    to: full(victim),
    detail: expect.stringContaining(
      `it names ${full(victim)}, but a redrive from ${full(dlq)} writes only to ${full(topic)}`,
    ),
  });
  const run = await new BabelQueueRedrive(client).run({ topic: dlq });
  expect(run).toMatchObject({ redriven: 0, refused: 1 });
  expect(run.items[0]!.restoredAs).toEqual(expect.any(String));
  await expectNothing(victimReader, 500);
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(1);

  // The CLI says so too.
  const out: string[] = [];
  const output = { out: (line: string) => out.push(line), err: (line: string) => out.push(line) };
  const env = { BABELQUEUE_PULSAR_SERVICE_URL: serviceUrl() };
  expect(await runCli(['redrive', '--topic', dlq, '--dry-run'], output, env)).toBe(0);
  expect(out[0]).toMatch(
    new RegExp(
      `^REFUSED \\(target not allowed\\), kept in DLQ dlq=\\S+ id="forged-2" .* -> "${full(victim)}" : refused: it names ${full(victim)}`,
    ),
  );
  expect(out[1]).toMatch(/refused \(target not allowed\) 1, failed 0$/);
  await expectNothing(victimReader, 300);

  // The operator's word: allowed, it goes.
  out.length = 0;
  expect(await runCli(['redrive', '--topic', dlq, '--allow-target', victim], output, env)).toBe(0);
  expect(out[0]).toMatch(new RegExp(`^redriven .* -> "${full(victim)}"$`));
  const [copy] = await receiveN(victimReader, 1);
  expect(JSON.parse(copy!.getData().toString()).meta.id).toBe('forged-2');
  expect(await backlog(dlq, 'babelqueue-redrive')).toBe(0);
});
