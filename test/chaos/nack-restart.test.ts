// Chaos: retry 'nack' while the broker forgets its redelivery counts. Pulsar keeps a message's redelivery count in
// the broker's memory: a topic unload and a broker restart start it again at 0. Messages that keep failing must
// still end in the dead-letter topic, within the bound docs/retries.md states: maxAttempts handler calls, plus one
// for each delivery a restart or an unload interrupted.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { BabelContext, BabelHandler } from '../../lib/index.js';
import { brokerSettings, restartBroker } from '../../scripts/lib/broker.mjs';
import { startService } from '../support/nest-app.js';
import {
  chaosClient,
  chaosWebUrl,
  collectDeadLetters,
  subscribeDeadLetters,
  KEY,
  settleAll,
  validMessage,
} from './support/harness.js';
import { Ledger } from './support/ledger.js';

jest.setTimeout(300_000);
const URN = 'urn:babel:chaos:nack';
const MAX_ATTEMPTS = 4;
const MESSAGES = 20;

it("retry 'nack' across a topic unload and a broker restart: every failing message is dead-lettered", async () => {
  const topic = `chaos-nack-${Date.now()}`;
  const url = new URL(chaosWebUrl());
  const settings = brokerSettings({
    ...process.env,
    PULSAR_WEB_PORT: url.port,
    PULSAR_BROKER_PORT: process.env.BQ_CHAOS_BROKER_PORT ?? '16650',
  });
  const client = chaosClient();
  const ledger = new Ledger("retry 'nack' + unload + broker restart");
  const calls = new Map<string, number>();
  const dlq = collectDeadLetters(await subscribeDeadLetters(client, topic), ledger);
  @Controller()
  class AlwaysFails {
    @BabelHandler(URN)
    handle(@Ctx() ctx: BabelContext) {
      const key = ctx.getProperties()[KEY]!;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      throw new Error('downstream is down');
    }
  }
  const service = await startService([AlwaysFails], {
    client,
    topics: topic,
    retry: 'nack',
    maxAttempts: MAX_ATTEMPTS,
    nackRedeliverTimeoutMs: 1000,
    concurrency: 4,
  });
  const producer = await client.createProducer({ topic });
  const admin = `${chaosWebUrl()}/admin/v2/persistent/public/default/${topic}`;
  try {
    for (let i = 0; i < MESSAGES; i++) {
      ledger.markSent(`m:${i}`);
      await producer.send(validMessage(URN, topic, `m:${i}`));
    }
    const everyOneAtLeast = (n: number) => () => [...calls.values()].filter((count) => count >= n).length === MESSAGES;
    await waitUntil(everyOneAtLeast(1), 60_000);
    // The topic moves (here: is reloaded): the broker's redelivery counts start again at 0.
    const unload = await fetch(`${admin}/unload`, { method: 'PUT' });
    expect(unload.status).toBeLessThan(300);
    await waitUntil(everyOneAtLeast(2), 60_000);
    await restartBroker(settings, { kill: false });
    await settleAll(ledger, 120_000);
  } finally {
    ledger.print();
    console.log(
      `[chaos] handler calls per message (maxAttempts ${MAX_ATTEMPTS}): ` +
        JSON.stringify(Object.fromEntries([...countBy(calls.values())].sort(([a], [b]) => a - b))),
    );
    await producer.close().catch(() => undefined);
    await service.close();
    await dlq.stop();
    await client.close();
  }
  expect(ledger.summary()).toMatchObject({ sent: MESSAGES, deadLettered: MESSAGES, lost: 0 });
  // The bound: maxAttempts calls, plus one for each of the two interruptions a delivery may have met.
  for (const count of calls.values()) expect(count).toBeLessThanOrEqual(MAX_ATTEMPTS + 2);
});

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function countBy(values: Iterable<number>): Map<number, number> {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
