// Benchmark (not a test), `npm run bench user-path`: the app as users build it (BabelQueueModule.forRoot({ serviceUrl
// }), bench/module-app.mjs) with 1, 8 and 32 subscriptions (one handler per topic), on both clients:
// - live traffic: 60 messages published one by one to one topic; how many were handled while publishing, and how long
//   the rest took after the last publish;
// - the thread pool: an idle app, 20 small `fs.promises.readFile` calls one after another, p50 and max (anything
//   that held one of libuv's pool threads while waiting would show here).
// Figures only. BENCH_SUBSCRIPTIONS=1,8,32 to choose.
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import * as lib from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { ensureNativeClient } from '../scripts/lib/native-client.mjs';
import { startModuleApp } from './module-app.mjs';

const SUBSCRIPTIONS = (process.env.BENCH_SUBSCRIPTIONS ?? '1,8,32').split(',').map(Number);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A module-built app with one handler per topic (`urn:babel:bench:up:<i>` on topic i). */
async function appWith(serviceUrl, count, onMessage) {
  const tag = randomUUID().slice(0, 8);
  const topics = Array.from({ length: count }, (_, i) => `bench-up-${tag}-${i}`);
  class Handlers {}
  topics.forEach((topic, i) => {
    const name = `handle${i}`;
    Handlers.prototype[name] = () => onMessage();
    lib.BabelHandler(`urn:babel:bench:up:${i}`, { topic })(
      Handlers.prototype,
      name,
      Object.getOwnPropertyDescriptor(Handlers.prototype, name),
    );
  });
  Controller()(Handlers);
  return startModuleApp({
    lib,
    connection: { serviceUrl },
    topic: topics[0],
    consumer: { subscription: 'bench-up', concurrency: 8 },
    controllers: [Handlers],
  });
}

async function liveTraffic(serviceUrl, count) {
  let handled = 0;
  let lastAt = 0;
  const running = await appWith(serviceUrl, count, () => {
    handled += 1;
    lastAt = performance.now();
  });
  try {
    for (let n = 0; n < 60; n++) await running.client.publish('urn:babel:bench:up:0', { n });
    const lastPublish = performance.now();
    const duringPublish = handled;
    const deadline = Date.now() + 60_000;
    while (handled < 60 && Date.now() < deadline) await sleep(5);
    return { duringPublish, handled, restMs: Math.max(0, lastAt - lastPublish) };
  } finally {
    await running.close();
  }
}

async function idleReads(serviceUrl, count) {
  const running = await appWith(serviceUrl, count, () => {});
  try {
    await sleep(1000);
    const took = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await fs.promises.readFile(new URL(import.meta.url));
      took.push(performance.now() - started);
    }
    took.sort((a, b) => a - b);
    return { p50: took[10], max: took[19] };
  } finally {
    await running.close();
  }
}

ensureNativeClient();
const broker = await ensureBroker();
try {
  console.log('module-built apps, one handler per subscription (ms)');
  console.log(
    'client'.padEnd(10),
    'subscriptions'.padStart(13),
    'handled while publishing'.padStart(25),
    'rest after last publish'.padStart(24),
    'idle readFile p50'.padStart(18),
    'max'.padStart(8),
  );
  for (const [kind, serviceUrl] of [
    ['native', broker.serviceUrl],
    ['websocket', broker.webUrl],
  ]) {
    for (const count of SUBSCRIPTIONS) {
      const live = await liveTraffic(serviceUrl, count);
      const idle = await idleReads(serviceUrl, count);
      console.log(
        kind.padEnd(10),
        String(count).padStart(13),
        `${live.duringPublish} of 60`.padStart(25),
        `${live.restMs.toFixed(1)}${live.handled < 60 ? ` (${live.handled} handled)` : ''}`.padStart(24),
        idle.p50.toFixed(2).padStart(18),
        idle.max.toFixed(2).padStart(8),
      );
    }
  }
} finally {
  if (broker.started) await stopBroker();
}
process.exit(0);
