// Benchmark (not a test), `npm run bench latency`: publish → handler latency at a fixed rate through module-built
// apps (the README's way), beside the same path taken by the raw clients (a raw producer and a raw consumer, no
// transport), so the figure says what the transport adds and what the broker takes. Both clients, interleaved rounds.
//
// The broker's part: when a subscription has caught up, the broker looks for new entries again after
// `managedLedgerNewEntriesCheckDelayInMillis` (Pulsar's default 10 ms), so a message published to an idle
// subscription waits up to that long before it is dispatched, on every client. The project's broker sets it to 0
// (scripts/pulsar/standalone-overrides.conf); docs/performance.md#latency has the figures with both settings.
//
// BENCH_RATE (500 msg/s), BENCH_SECONDS (4 per row), BENCH_ROUNDS (2).
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as lib from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { ensureNativeClient } from '../scripts/lib/native-client.mjs';
import { startModuleApp } from './module-app.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const URN = 'urn:babel:bench:latency';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

ensureNativeClient();
const Native = createRequire(path.join(root, 'package.json'))('pulsar-client');
const broker = await ensureBroker();
const uniqueTopic = () => `bench-latency-${randomUUID().slice(0, 8)}`;

/** Publishes RATE messages a second for SECONDS through `publish(t)`; resolves once `seen()` has them all. */
async function paced(publish, seen) {
  const count = RATE * SECONDS;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 1) await sleep(wait);
    void publish(performance.now());
  }
  const deadline = Date.now() + 60_000;
  while (seen() < count && Date.now() < deadline) await sleep(20);
}

/**
 * The raw path: a raw producer (no batching, as the transport's) and a raw consumer taking one message at a time,
 * on `client` (closed at the end).
 */
async function rawPath(client, producerConfig = {}) {
  const topic = `persistent://public/default/${uniqueTopic()}`;
  const consumer = await client.subscribe({ topic, subscription: 'bench', subscriptionType: 'Shared' });
  const producer = await client.createProducer({ topic, ...producerConfig });
  const latencies = [];
  let open = true;
  void (async () => {
    while (open) {
      const message = await consumer.receive().catch(() => null);
      if (!message) return;
      latencies.push(performance.now() - Number(message.getData().toString()));
      void consumer.acknowledge(message);
    }
  })();
  await paced(
    (t) => producer.send({ data: Buffer.from(String(t)) }),
    () => latencies.length,
  );
  open = false;
  await producer.close();
  await consumer.close();
  await client.close();
  return latencies;
}

const rawNative = () =>
  rawPath(new Native.Client({ serviceUrl: broker.serviceUrl, log: () => {} }), { batchingEnabled: false });
const rawWebSocket = () => rawPath(new lib.PulsarWebSocketClient({ serviceUrl: broker.webUrl }));

/** The user's path: a module-built app, the module's own client publishing, a handler at concurrency 8. */
async function moduleApp(kind) {
  const latencies = [];
  class Sink {
    consume(data) {
      latencies.push(performance.now() - data.t);
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  lib.BabelHandler(URN)(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);
  const running = await startModuleApp({
    lib,
    connection: { serviceUrl: kind === 'native' ? broker.serviceUrl : broker.webUrl },
    topic: uniqueTopic(),
    consumer: { concurrency: 8, subscription: 'bench' },
    controllers: [Sink],
  });
  await running.client.publish(URN, { t: performance.now() }); // producer and subscription warm
  while (latencies.length < 1) await sleep(10);
  latencies.length = 0;
  await paced(
    (t) => running.client.publish(URN, { t }),
    () => latencies.length,
  );
  await running.close();
  return latencies;
}

const rows = {
  'raw native (producer → receive())': rawNative,
  'module-built app, native': () => moduleApp('native'),
  'raw WebSocket (producer → receive())': rawWebSocket,
  'module-built app, WebSocket': () => moduleApp('websocket'),
};
const all = Object.fromEntries(Object.keys(rows).map((name) => [name, []]));
try {
  console.log(
    `broker ${broker.webUrl}; publish → handler at ${RATE} msg/s, ${SECONDS} s a row, ${ROUNDS} interleaved rounds:`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(rows)) all[name].push(...(await run()));
  }
  for (const [name, latencies] of Object.entries(all)) {
    const sorted = latencies.sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]?.toFixed(1);
    console.log(`  ${name.padEnd(38)} p50 ${pct(50)} ms, p99 ${pct(99)} ms (${sorted.length} messages)`);
  }
} finally {
  if (broker.started) await stopBroker();
}
process.exit(0);
