// Benchmark (not a test): what one app instance consumes per second, by concurrency and handler latency, on both
// clients; the figures behind the README's capacity model ("Running at scale"). A backlog of N messages is
// published first; the clock runs from the first handled message to the last. BENCH_MESSAGES=<n> to tune.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelPulsarServer } from '../dist/esm/index.js';
import { createPulsarClient } from '../dist/esm/pulsar/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';

const COUNT = Number(process.env.BENCH_MESSAGES ?? 1000);
const quiet = { log() {}, warn() {}, error() {}, debug() {} };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(serviceUrl, concurrency, handlerMs) {
  const topic = `bench-scale-${randomUUID().slice(0, 8)}`;
  let handled = 0;
  let first = 0n;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  class Sink {
    async consume() {
      if (handled === 0) first = process.hrtime.bigint();
      if (handlerMs > 0) await sleep(handlerMs);
      handled += 1;
      if (handled === COUNT) done(process.hrtime.bigint());
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  Payload()(Sink.prototype, 'consume', 0);
  BabelHandler('urn:babel:bench:scale')(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);
  class BenchModule {}
  Module({ controllers: [Sink] })(BenchModule);

  const { client } = await createPulsarClient({ serviceUrl });
  // Publish the backlog first, on a subscription that already exists, so the consumer runs flat out.
  const publisher = new BabelPulsarClient({ client, topic });
  const server = new BabelPulsarServer({ client, topics: topic, concurrency, logger: quiet });
  const app = await NestFactory.createMicroservice(BenchModule, { strategy: server, logger: false });
  await app.listen(); // creates the subscription…
  await app.close(); // …and stops consuming before the backlog is published
  for (let i = 0; i < COUNT; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, COUNT - i) }, (_, j) =>
        publisher.publish('urn:babel:bench:scale', { i: i + j, note: 'Café ☕' }),
      ),
    );
  }
  const rssBefore = process.memoryUsage().rss;
  const consumer = new BabelPulsarServer({ client, topics: topic, concurrency, logger: quiet });
  const app2 = await NestFactory.createMicroservice(BenchModule, { strategy: consumer, logger: false });
  await app2.listen();
  const ended = await finished;
  const rssGrowthMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  await app2.close();
  await publisher.close();
  await client.close();
  return { perSecond: COUNT / (Number(ended - first) / 1e9), rssGrowthMiB };
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
