// Chaos: failing, hanging and oversized messages mixed with healthy ones; each ends handled or dead-lettered.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { BabelContext, BabelHandler } from '../../lib/index.js';
import { startService } from '../support/nest-app.js';
import {
  chaosClient,
  collectDeadLetters,
  subscribeDeadLetters,
  KEY,
  nearFrameCap,
  settleAll,
  validMessage,
} from './support/harness.js';
import { Ledger } from './support/ledger.js';

jest.setTimeout(120_000);
const URN = 'urn:babel:chaos:handlers';

it('failing, hanging and oversized messages: none lost, none looping', async () => {
  const topic = `chaos-handlers-${Date.now()}`;
  const client = chaosClient();
  const ledger = new Ledger('failing/hanging/oversized handlers');
  const dlq = collectDeadLetters(await subscribeDeadLetters(client, topic), ledger);
  const runs = new Map<string, number>();
  @Controller()
  class Handlers {
    @BabelHandler(URN, { timeoutMs: 300 })
    async handle(@Ctx() ctx: BabelContext) {
      const key = ctx.getProperties()[KEY]!;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      const kind = key.split(':')[0];
      if (kind === 'fail' || kind === 'big') throw new Error(`chaos ${kind}`);
      if (kind === 'flaky' && ctx.getAttempts() === 0) throw 'flaky once';
      if (kind === 'hang') await new Promise(() => {}); // never settles
      ledger.markHandled(key);
    }
  }
  const service = await startService([Handlers], {
    client,
    topics: topic,
    concurrency: 4,
    // Every 'hang' attempt never ends (20 messages x 3 attempts): with the default bound (twice concurrency) the
    // consumer would stop taking messages, as documented (status stalled). This scenario is about settling them.
    maxOverdueHandlers: 100,
    maxAttempts: 3,
    nackRedeliverTimeoutMs: 200,
  });
  const producer = await client.createProducer({ topic });
  try {
    const kinds = ['ok', 'ok', 'fail', 'flaky', 'hang', 'ok'];
    for (let i = 0; i < 120; i++) {
      const key = `${kinds[i % kinds.length]}:${i}`;
      await producer.send(validMessage(URN, topic, key));
      ledger.markSent(key);
    }
    for (let i = 0; i < 3; i++) {
      // Just under the WebSocket frame cap: received fine, but its dead-letter record does not fit
      const key = `big:${i}`;
      const size = nearFrameCap((n) => validMessage(URN, topic, key, { blob: 'x'.repeat(n) }));
      await producer.send(validMessage(URN, topic, key, { blob: 'x'.repeat(size) }));
      ledger.markSent(key);
    }
    await settleAll(ledger, 90_000);
  } finally {
    ledger.print();
    await producer.close();
    await service.close();
    await dlq.stop();
    await client.close();
  }
  expect(ledger.summary().lost).toBe(0);
  for (const [key, count] of runs) expect([key, count <= 3]).toEqual([key, true]); // bounded: maxAttempts
});
