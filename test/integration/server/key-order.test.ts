// ordering 'key' through the real broker, on the client under test: a module-built app at concurrency 16 on a
// Key_Shared subscription, a tenth of the messages failing once, retried in place before the later messages of their
// key; a message out of attempts dead-lettered, and its key going on.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties, type PulsarConsumer, type PulsarProducer } from '../../../lib/pulsar/index.js';
import { backlog, newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(120_000);

const POSTED = 'urn:babel:ledger:posted';
const BROKEN = 'urn:babel:ledger:broken';

interface Posting {
  key: string;
  seq: number;
}

/** A key's next expected sequence number and what broke it, checked by the handlers. */
const ledger = {
  next: new Map<string, number>(),
  running: new Set<string>(),
  failedOnce: new Set<string>(),
  violations: [] as string[],
  handled: 0,
  attemptsSeen: [] as number[],
};

function enter({ key, seq }: Posting): void {
  if (ledger.running.has(key)) ledger.violations.push(`${key}/${seq} ran beside another message of its key`);
  const expected = ledger.next.get(key) ?? 0;
  if (seq !== expected) ledger.violations.push(`${key}/${seq} ran when ${key}/${expected} was due`);
  ledger.running.add(key);
}

@Controller()
class Ledger {
  @BabelHandler(POSTED)
  async posted(@Payload() posting: Posting) {
    enter(posting);
    try {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
      const id = `${posting.key}/${posting.seq}`;
      if (posting.seq % 10 === 4 && !ledger.failedOnce.has(id)) {
        ledger.failedOnce.add(id);
        throw new Error(`${id} fails once`);
      }
      ledger.next.set(posting.key, posting.seq + 1);
      ledger.handled += 1;
    } finally {
      ledger.running.delete(posting.key);
    }
  }

  @BabelHandler(BROKEN)
  broken(@Payload() posting: Posting, @Ctx() ctx: BabelContext) {
    enter(posting);
    ledger.running.delete(posting.key);
    if (posting.seq === 0) {
      ledger.attemptsSeen.push(ctx.getAttempts());
      // Its last attempt: dead-lettered next, so the key moves on past it.
      if (ctx.getAttempts() === 2) ledger.next.set(posting.key, 1);
      throw new Error('never works');
    }
    ledger.next.set(posting.key, posting.seq + 1);
    ledger.handled += 1;
  }
}

let client: PulsarClientLike;
let service: RunningService;
let topic: string;
let producer: PulsarProducer;
let dlq: PulsarConsumer;

beforeAll(async () => {
  client = newClient();
  topic = uniqueTopic('key-order');
  dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  service = await startService([Ledger], {
    client,
    topics: topic,
    subscriptionType: 'KeyShared',
    ordering: 'key',
    concurrency: 16,
    maxAttempts: 3,
    retryPolicy: { backoff: 'fixed', initialDelayMs: 200 },
  });
  producer = await client.createProducer({ topic });
});
afterAll(async () => {
  await producer.close();
  await service.close();
  await dlq.close();
  await client.close();
});
beforeEach(() => {
  ledger.next.clear();
  ledger.running.clear();
  ledger.failedOnce.clear();
  ledger.violations.length = 0;
  ledger.handled = 0;
  ledger.attemptsSeen.length = 0;
  service.settled.length = 0;
});

async function publish(urn: string, posting: Posting): Promise<void> {
  const envelope = EnvelopeCodec.make(urn, { ...posting }, { queue: topic });
  await producer.send({
    data: EnvelopeCodec.encodeToBuffer(envelope),
    properties: pulsarProperties(envelope),
    partitionKey: posting.key,
  });
}

describe("ordering 'key' (real broker)", () => {
  it('keeps every key in order at concurrency 16 with a tenth failing once, retried in place', async () => {
    const keys = 20;
    const perKey = 20;
    for (let seq = 0; seq < perKey; seq++)
      for (let k = 0; k < keys; k++) await publish(POSTED, { key: `acct-${k}`, seq });
    await waitFor('every posting handled', () => ledger.handled === keys * perKey, 60_000);
    await waitFor('the backlog drained', async () => (await backlog(topic)) === 0);
    expect(ledger.violations).toEqual([]);
    const retries = service.settled.filter(({ action }) => action === 'retry');
    expect(retries).toHaveLength(keys * (perKey / 10));
    // In place: nothing went back to the topic, every retry waited in its lane.
    expect(retries.every((event) => event.inPlace === true && event.retryDelayMs === 200)).toBe(true);
    expect(service.settled.filter(({ action }) => action === 'ack')).toHaveLength(keys * perKey);
  });

  it('dead-letters a message at maxAttempts, counting its attempts in place, then runs the rest of its key', async () => {
    for (let seq = 0; seq < 3; seq++) await publish(BROKEN, { key: 'broken-key', seq });
    await publish(POSTED, { key: 'other-key', seq: 0 });
    const [record] = await receiveN(dlq, 1, 30_000);
    const body = JSON.parse(record!.getData().toString());
    expect(body.dead_letter).toMatchObject({ reason: 'failed', error: 'never works', attempts: 3 });
    expect(record!.getPartitionKey()).toBe('broken-key');
    await waitFor('the rest of the key handled', () => ledger.handled === 3);
    expect(ledger.attemptsSeen).toEqual([0, 1, 2]);
    expect(ledger.violations).toEqual([]);
    expect(ledger.next.get('broken-key')).toBe(3);
  });
});
