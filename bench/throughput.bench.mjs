// Benchmark (not a test): end-to-end throughput and memory of a module-built app (bench/module-app.mjs) against the
// real broker: N messages published with the module's BabelPulsarClient, consumed by its server, at several
// concurrency levels, over the WebSocket client. Uses the broker on PULSAR_WEB_URL or 127.0.0.1:8080, starting one
// if none answers. BENCH_MESSAGES=<n> to tune.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import * as lib from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { startModuleApp } from './module-app.mjs';

const COUNT = Number(process.env.BENCH_MESSAGES ?? 2000);

async function run(webUrl, concurrency) {
  const topic = `bench-${randomUUID().slice(0, 8)}`;
  let handled = 0;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  class Sink {
    consume() {
      handled += 1;
      if (handled === COUNT) done();
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  Payload()(Sink.prototype, 'consume', 0);
  lib.BabelHandler('urn:babel:bench:tick')(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);

  const running = await startModuleApp({
    lib,
    connection: { serviceUrl: webUrl },
    topic,
    consumer: { concurrency },
    controllers: [Sink],
  });
  const publisher = running.client;
  const rssBefore = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  const sends = [];
  for (let i = 0; i < COUNT; i++) sends.push(publisher.publish('urn:babel:bench:tick', { i, note: 'Café ☕' }));
  await Promise.all(sends);
  const published = process.hrtime.bigint();
  await finished;
  const ended = process.hrtime.bigint();
  const rssPeak = process.memoryUsage().rss;
  await running.close();
  const seconds = (a, b) => Number(b - a) / 1e9;
  return {
    concurrency,
    publishPerSecond: COUNT / seconds(started, published),
    endToEndPerSecond: COUNT / seconds(started, ended),
    rssGrowthMiB: (rssPeak - rssBefore) / 2 ** 20,
  };
}

const broker = await ensureBroker();
try {
  console.log(`end to end through ${broker.webUrl} (WebSocket client): ${COUNT} messages per run`);
  console.log(
    'concurrency'.padEnd(12),
    'publish msg/s'.padStart(14),
    'end-to-end msg/s'.padStart(18),
    'RSS growth MiB'.padStart(16),
  );
  for (const concurrency of [1, 8]) {
    const r = await run(broker.webUrl, concurrency);
    console.log(
      String(r.concurrency).padEnd(12),
      r.publishPerSecond.toFixed(0).padStart(14),
      r.endToEndPerSecond.toFixed(0).padStart(18),
      r.rssGrowthMiB.toFixed(1).padStart(16),
    );
  }
} finally {
  if (broker.started) await stopBroker();
}
