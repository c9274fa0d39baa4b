// Chaos: a few thousand hostile messages mixed with valid ones. Every one must end handled or dead-lettered,
// the consumer must never stop, and nothing may be lost.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { randomBytes } from 'node:crypto';
import { BabelContext, BabelHandler, EnvelopeCodec } from '../../lib/index.js';
import { startService } from '../support/nest-app.js';
import {
  chaosClient,
  collectDeadLetters,
  subscribeDeadLetters,
  KEY,
  settleAll,
  validMessage,
} from './support/harness.js';
import { Ledger } from './support/ledger.js';

jest.setTimeout(180_000);
const URN = 'urn:babel:chaos:fuzz';

/** A deterministic generator, so a failing run can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hostile(random: () => number, topic: string, i: number): { data: Buffer; properties: Record<string, string> } {
  const base = JSON.parse(EnvelopeCodec.encode(EnvelopeCodec.make(URN, {}, { queue: topic }))) as Record<
    string,
    unknown
  >;
  const text = (body: string) => Buffer.from(body, 'utf8');
  const withData = (data: string) => text(JSON.stringify(base).replace('"data":{}', `"data":${data}`));
  const kinds: Array<() => Buffer> = [
    () => randomBytes(1 + Math.floor(random() * 2048)),
    () => Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d]), // invalid UTF-8
    () => text(JSON.stringify(base).slice(0, Math.floor(random() * 60))), // truncated JSON
    () => text('[1,2,3]'),
    () => text('"just a string"'),
    () => withData(`{"s":"${'y'.repeat(50_000 + Math.floor(random() * 150_000))}"}`), // huge string
    () => withData(`{"deep":${'['.repeat(5000)}${']'.repeat(5000)}}`), // deep nesting
    () => withData('{"big":123456789012345678901234567890,"tiny":1e-400,"huge":1e400,"neg":-0,"x":1.0}'),
    () => withData('{"a":1,"a":2,"a":{"a":3}}'), // duplicate keys
    () => withData('{"lone":"\\ud800","pair":"\\udc00\\ud800"}'), // lone surrogates
    () => text(JSON.stringify({ ...base, attempts: 'NaN' })),
    () => text(JSON.stringify({ ...base, meta: { ...(base.meta as object), schema_version: 2 } })),
  ];
  const body = kinds[i % kinds.length]!();
  const junk: Record<string, string> = {};
  if (random() < 0.5) junk['bq-attempts'] = ['abc', '-1', '99999999999', '', '007'][Math.floor(random() * 5)]!;
  if (random() < 0.3) junk['bq-job'] = ['', ' ', 'urn:babel:chaos:nobody', '\u0000'][Math.floor(random() * 4)]!;
  if (random() < 0.3) junk['bq-trace-id'] = 'z'.repeat(Math.floor(random() * 2000));
  if (random() < 0.2) junk['bq-delay'] = 'soon';
  if (random() < 0.2) junk['bq-schema-version'] = ' \t';
  return { data: body, properties: { ...junk, [KEY]: `hostile:${i}` } };
}

it('a few thousand hostile messages mixed with valid ones: none lost, the consumer keeps going', async () => {
  const topic = `chaos-fuzz-${Date.now()}`;
  const client = chaosClient();
  const ledger = new Ledger('fuzz');
  const dlq = collectDeadLetters(await subscribeDeadLetters(client, topic), ledger);
  @Controller()
  class Fuzz {
    @BabelHandler(URN)
    handle(@Ctx() ctx: BabelContext) {
      ledger.markHandled(ctx.getProperties()[KEY]!);
    }
  }
  const service = await startService([Fuzz], { client, topics: topic, concurrency: 8, nackRedeliverTimeoutMs: 200 });
  const producer = await client.createProducer({ topic });
  const random = prng(12);
  try {
    const sends: Array<Promise<unknown>> = [];
    for (let i = 0; i < 2400; i++) {
      const message = i % 4 === 0 ? validMessage(URN, topic, `valid:${i}`) : hostile(random, topic, i);
      sends.push(producer.send(message));
      ledger.markSent(message.properties[KEY]!);
      if (sends.length >= 200) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
    await settleAll(ledger, 120_000);
  } finally {
    ledger.print();
    await producer.close();
    await service.close();
    await dlq.stop();
    await client.close();
  }
  expect(ledger.summary()).toMatchObject({ sent: 2400, lost: 0 });
});
