// Benchmark (not a test): what one app instance consumes per second, by concurrency and handler latency, on both
// clients; the figures behind the README's capacity model ("Running at scale"). A backlog of N messages is
// published first; the clock runs from the first handled message to the last. BENCH_MESSAGES=<n> to tune. The app
// is built as users build it (bench/module-app.mjs): the module from a service URL.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import * as lib from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { startModuleApp } from './module-app.mjs';

const COUNT = Number(process.env.BENCH_MESSAGES ?? 1000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(serviceUrl, concurrency, handlerMs) {
  const topic = `bench-scale-${randomUUID().slice(0, 8)}`;
  let handled = 0;
  let firstAt = 0n;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  class Sink {
    async consume() {
      if (handled === 0) firstAt = process.hrtime.bigint();
      if (handlerMs > 0) await sleep(handlerMs);
      handled += 1;
      if (handled === COUNT) done(process.hrtime.bigint());
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  Payload()(Sink.prototype, 'consume', 0);
  lib.BabelHandler('urn:babel:bench:scale')(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);
  const app = () =>
    startModuleApp({ lib, connection: { serviceUrl }, topic, consumer: { concurrency }, controllers: [Sink] });

  // Publish the backlog first, on a subscription that already exists, so the consumer runs flat out.
  const first = await app(); // creates the subscription…
  await first.server.close(); // …and stops consuming before the backlog is published
  for (let i = 0; i < COUNT; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, COUNT - i) }, (_, j) =>
        first.client.publish('urn:babel:bench:scale', { i: i + j, note: 'Café ☕' }),
      ),
    );
  }
  await first.close();
  const rssBefore = process.memoryUsage().rss;
  const consuming = await app();
  const ended = await finished;
  const rssGrowthMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  await consuming.close();
  return { perSecond: COUNT / (Number(ended - firstAt) / 1e9), rssGrowthMiB };
}

const broker = await ensureBroker();
try {
  const clients = [['websocket', broker.webUrl]];
  try {
    createRequire(import.meta.url)('pulsar-client');
    clients.unshift(['native', broker.serviceUrl]);
  } catch {
    console.log('(the native pulsar-client is not loadable: WebSocket client only)');
  }
  console.log(`one instance draining a backlog of ${COUNT} messages through ${broker.webUrl}`);
  console.log(
    'client'.padEnd(10),
    'concurrency'.padStart(11),
    'handler ms'.padStart(11),
    'msg/s'.padStart(8),
    'model c/latency'.padStart(16),
    'RSS growth MiB'.padStart(15),
  );
  for (const [kind, serviceUrl] of clients) {
    for (const [concurrency, handlerMs] of [
      [1, 0],
      [8, 0],
      [1, 10],
      [8, 10],
      [32, 10],
      [8, 50],
    ]) {
      const r = await run(serviceUrl, concurrency, handlerMs);
      const bound = handlerMs > 0 ? ((concurrency * 1000) / handlerMs).toFixed(0) : '-';
      console.log(
        kind.padEnd(10),
        String(concurrency).padStart(11),
        String(handlerMs).padStart(11),
        r.perSecond.toFixed(0).padStart(8),
        bound.padStart(16),
        r.rssGrowthMiB.toFixed(1).padStart(15),
      );
    }
  }
} finally {
  if (broker.started) await stopBroker();
}
