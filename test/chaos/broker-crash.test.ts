// Chaos: the broker is killed with SIGKILL mid-stream and restarted on the same data (its own broker, never
// the shared one). Stored messages survive; ambiguous sends are retried with the same id.
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

jest.setTimeout(240_000);
const URN = 'urn:babel:chaos:broker';

it('broker kill -9 and restart on the same data: nothing lost', async () => {
  const topic = `chaos-broker-${Date.now()}`;
  const url = new URL(chaosWebUrl());
  const settings = brokerSettings({
    ...process.env,
    PULSAR_WEB_PORT: url.port,
    PULSAR_BROKER_PORT: process.env.BQ_CHAOS_BROKER_PORT ?? '16650',
  });
  const client = chaosClient();
  const ledger = new Ledger('broker kill -9 + restart');
  const dlq = collectDeadLetters(await subscribeDeadLetters(client, topic), ledger);
  @Controller()
  class Crash {
    @BabelHandler(URN)
    handle(@Ctx() ctx: BabelContext) {
      ledger.markHandled(ctx.getProperties()[KEY]!);
    }
  }
  const service = await startService([Crash], { client, topics: topic, concurrency: 4 });
  const producer = await client.createProducer({ topic, sendTimeoutMs: 120_000 } as never);
  const unconfirmed: string[] = [];
  const send = async (key: string) => {
    try {
      await producer.send(validMessage(URN, topic, key));
    } catch {
      unconfirmed.push(key); // may or may not be stored: sent again below with the same key
    }
  };
  try {
    for (let i = 0; i < 100; i++) {
      ledger.markSent(`m:${i}`);
      await send(`m:${i}`);
    }
    await restartBroker(settings, { kill: true });
    for (let i = 100; i < 200; i++) {
      ledger.markSent(`m:${i}`);
      await send(`m:${i}`);
    }
    for (const key of unconfirmed.splice(0)) await send(key);
    await settleAll(ledger, 90_000);
  } finally {
    ledger.print();
    await producer.close();
    await service.close();
    await dlq.stop();
    await client.close();
  }
  expect(unconfirmed).toEqual([]);
  expect(ledger.summary()).toMatchObject({ sent: 200, lost: 0 });
});
