// Benchmark (not a test): request/response latency (docs/request-response.md) against the real broker, on both
// clients, at a steady 100, 500 and 1,000 requests/s: client.send() until its reply arrives, next to a publish +
// handle of the same message (publish() until the handler runs). p50 / p99 in ms. BENCH_SECONDS=<n> sets each run's
// length. The app is built as users build it (bench/module-app.mjs): the module from a service URL, and the caller
// is the module's own BabelPulsarClient.
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import * as lib from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { ensureNativeClient } from '../scripts/lib/native-client.mjs';
import { startModuleApp } from './module-app.mjs';

const { BabelHandler } = lib;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** When each one-way message was handled, by its index (the publish + handle side of the comparison). */
const handledAt = new Map();

class Handlers {
  quote(data) {
    return { i: data.i, total: data.i * 2 };
  }
  tick(data) {
    handledAt.set(data.i, performance.now());
  }
}
for (const [method, urn] of [
  ['quote', 'urn:babel:bench:quote'],
  ['tick', 'urn:babel:bench:tick'],
]) {
  const descriptor = Object.getOwnPropertyDescriptor(Handlers.prototype, method);
  Payload()(Handlers.prototype, method, 0);
  BabelHandler(urn)(Handlers.prototype, method, descriptor);
}
Controller()(Handlers);

/** Calls `once(i)` `rate` times a second for SECONDS seconds, in 10 ms steps; resolves to every call's promise. */
async function paced(rate, once) {
  const total = rate * SECONDS;
  const perStep = rate / 100;
  const calls = [];
  const start = performance.now();
  let due = 0;
  while (calls.length < total) {
    due += perStep;
    while (calls.length < Math.min(total, Math.floor(due))) calls.push(once(calls.length));
    const next = start + (calls.length / rate) * 1000;
    await sleep(Math.max(0, next - performance.now()));
  }
  return Promise.all(calls);
}

async function measure(serviceUrl, rate) {
  const topic = `bench-rpc-${randomUUID().slice(0, 8)}`;
  const running = await startModuleApp({
    lib,
    connection: { serviceUrl },
    topic,
    consumer: { concurrency: 32 },
    controllers: [Handlers],
  });
  const caller = running.client;
  try {
    await lastValueFrom(caller.send('urn:babel:bench:quote', { i: -1 })); // opens the reply topic
    const requests = await paced(rate, async (i) => {
      const started = performance.now();
      await lastValueFrom(caller.send('urn:babel:bench:quote', { i }));
      return performance.now() - started;
    });
    handledAt.clear();
    const sentAt = await paced(rate, async (i) => {
      const started = performance.now();
      await caller.publish('urn:babel:bench:tick', { i });
      return started;
    });
    while (handledAt.size < sentAt.length) await sleep(20);
    const oneWay = sentAt.map((started, i) => handledAt.get(i) - started);
    return { requests, oneWay, stats: caller.replyStats };
  } finally {
    await running.close();
  }
}

ensureNativeClient();
createRequire(path.join(root, 'package.json'))('pulsar-client');
const broker = await ensureBroker();
const clients = { native: broker.serviceUrl, websocket: broker.webUrl };
try {
  console.log(`request/response vs publish + handle, ${SECONDS} s per run (ms)`);
  console.log(
    'client'.padEnd(10),
    'req/s'.padStart(6),
    'send p50'.padStart(9),
    'send p99'.padStart(9),
    'one-way p50'.padStart(12),
    'one-way p99'.padStart(12),
    'lost'.padStart(5),
    'late'.padStart(5),
  );
  for (const [name, serviceUrl] of Object.entries(clients)) {
    for (const rate of [100, 500, 1000]) {
      const { requests, oneWay, stats } = await measure(serviceUrl, rate);
      console.log(
        name.padEnd(10),
        String(rate).padStart(6),
        percentile(requests, 50).toFixed(1).padStart(9),
        percentile(requests, 99).toFixed(1).padStart(9),
        percentile(oneWay, 50).toFixed(1).padStart(12),
        percentile(oneWay, 99).toFixed(1).padStart(12),
        String(requests.length + 1 - stats.delivered).padStart(5),
        String(stats.late).padStart(5),
      );
    }
  }
} finally {
  if (broker.started) await stopBroker();
}
