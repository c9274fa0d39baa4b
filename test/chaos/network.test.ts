// Chaos: a network cut and a silent stall between the consumer and the broker, while messages keep coming.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { BabelContext, BabelHandler } from '../../lib/index.js';
import { startService } from '../support/nest-app.js';
import { TcpProxy } from '../integration/websocket/support/tcp-proxy.js';
import { chaosClient, chaosWebUrl, collectDeadLetters, KEY, settleAll, validMessage } from './support/harness.js';
import { Ledger } from './support/ledger.js';

jest.setTimeout(120_000);
const URN = 'urn:babel:chaos:network';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it.each([
  ['network cut', (proxy: TcpProxy) => (proxy.pause(), proxy.dropAll()), (proxy: TcpProxy) => proxy.resume()],
  ['silent stall', (proxy: TcpProxy) => proxy.freeze(), (proxy: TcpProxy) => proxy.thaw()],
])('%s: every message handled or dead-lettered, none lost', async (name, fault, heal) => {
  const topic = `chaos-${name.replace(' ', '-')}-${Date.now()}`;
  const target = new URL(chaosWebUrl());
  const proxy = new TcpProxy(target.hostname, Number(target.port));
  await proxy.start();
  const direct = chaosClient();
  const viaProxy = chaosClient(proxy.url);
  const ledger = new Ledger(name);
  const dlq = collectDeadLetters(
    await direct.subscribe({ topic: `${topic}.dlq`, subscription: 'chaos', subscriptionType: 'Shared' }),
    ledger,
  );
  @Controller()
  class Network {
    @BabelHandler(URN)
    handle(@Ctx() ctx: BabelContext) {
      ledger.markHandled(ctx.getProperties()[KEY]!);
    }
  }
  const service = await startService([Network], { client: viaProxy, topics: topic, concurrency: 4 });
  const producer = await direct.createProducer({ topic });
  try {
    for (let i = 0; i < 300; i++) {
      const key = `${name}-${i}`;
      await producer.send(validMessage(URN, topic, key));
      ledger.markSent(key);
      if (i === 100) fault(proxy);
      if (i === 200) {
        await sleep(8000); // long enough for the keepalive to notice a stall
        heal(proxy);
      }
    }
    await settleAll(ledger, 60_000);
  } finally {
    ledger.print();
    await producer.close();
    await service.close();
    await dlq.stop();
    await viaProxy.close();
    await direct.close();
    await proxy.stop();
  }
  expect(ledger.summary()).toMatchObject({ sent: 300, lost: 0 });
  expect(ledger.settledCount()).toBe(300);
});
