// Benchmark (not a test): per-key order at concurrency 32 against the unordered mode, on both clients. A backlog of
// N messages over K keys (sequence numbers per key, in publish order) is published once and drained twice by one
// module-built instance, each mode on its own subscription; a tenth of the messages fail once (retried in place
// under ordering 'key', by a copy at the back of the topic without it). The handler checks each key's sequence
// number. Reported: msg/s from the first handled message to the last acknowledged, order violations per key, and
// that every message ended acknowledged. BENCH_MESSAGES, BENCH_KEYS, BENCH_CONCURRENCY, BENCH_HANDLER_MS to tune;
// BENCH_CLIENT=native|websocket for one client only.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import * as lib from '../dist/esm/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { startModuleApp } from './module-app.mjs';

const COUNT = Number(process.env.BENCH_MESSAGES ?? 100_000);
const KEYS = Number(process.env.BENCH_KEYS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const HANDLER_MS = Number(process.env.BENCH_HANDLER_MS ?? 0);
const URN = 'urn:babel:bench:key-order';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** A tenth of the messages fail on their first attempt, the same ones in both modes. */
const failsOnce = (key, seq) => (key * 7 + seq * 13) % 10 === 0;

/** A controller that checks each key's order and counts what it handled; `done` resolves at the last one. */
function sinkFor(expected) {
  const state = { handled: 0, violations: 0, failed: new Set(), next: new Map(), firstAt: 0n, endedAt: 0n };
  let done;
  state.finished = new Promise((resolve) => (done = resolve));
  class Sink {
    async consume({ key, seq }) {
      if (state.firstAt === 0n) state.firstAt = process.hrtime.bigint();
      if ((state.next.get(key) ?? 0) !== seq) state.violations += 1;
      if (HANDLER_MS > 0) await sleep(HANDLER_MS);
      const id = key * 1_000_000 + seq;
      if (failsOnce(key, seq) && !state.failed.has(id)) {
        state.failed.add(id);
        throw new Error('fails once');
      }
      state.next.set(key, seq + 1);
      state.handled += 1;
      if (state.handled === expected) {
        state.endedAt = process.hrtime.bigint();
        done();
      }
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  Payload()(Sink.prototype, 'consume', 0);
  lib.BabelHandler(URN)(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);
  return { Sink, state };
}

const consumerOf = (ordering, subscription) => ({
  subscription,
  subscriptionType: 'Shared',
  concurrency: CONCURRENCY,
  ordering,
  maxAttempts: 3,
});

async function drain(serviceUrl, topic, ordering, subscription) {
  const { Sink, state } = sinkFor(COUNT);
  const acked = new Set();
  let terminalOther = 0;
  const running = await startModuleApp({
    lib,
    connection: { serviceUrl },
    topic,
    consumer: consumerOf(ordering, subscription),
    controllers: [Sink],
  });
  running.server.on('settled', (event) => {
    if (event.action === 'ack') acked.add(event.messageId);
    else if (event.action !== 'retry') terminalOther += 1;
  });
  const timeout = sleep(15 * 60_000).then(() => 'timeout');
  const outcome = await Promise.race([state.finished.then(() => 'done'), timeout]);
  // The last acknowledgements are counted once they are made.
  const deadline = Date.now() + 10_000;
  while (acked.size < COUNT && Date.now() < deadline) await sleep(50);
  await running.close();
  const seconds = Number(state.endedAt - state.firstAt) / 1e9;
  return {
    outcome,
    perSecond: outcome === 'done' ? COUNT / seconds : 0,
    violations: state.violations,
    failedOnce: state.failed.size,
    acked: acked.size,
    terminalOther,
  };
}

/** A topic with its subscription made (its consumer stopped) and the backlog published on it. */
async function backlogFor(kind, serviceUrl, ordering, subscription) {
  const topic = `bench-key-order-${ordering}-${randomUUID().slice(0, 8)}`;
  const { Sink } = sinkFor(Number.POSITIVE_INFINITY);
  const publisher = await startModuleApp({
    lib,
    connection: { serviceUrl },
    topic,
    consumer: consumerOf(ordering, subscription),
    controllers: [Sink],
  });
  await publisher.server.close();
  const perKey = Math.ceil(COUNT / KEYS);
  const publishStarted = Date.now();
  let published = 0;
  for (let seq = 0; seq < perKey && published < COUNT; seq++) {
    const batch = Math.min(KEYS, COUNT - published);
    for (let k = 0; k < batch; k += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, batch - k) }, (_, j) =>
          publisher.client.publish(URN, { key: k + j, seq }, { key: `key-${k + j}` }),
        ),
      );
    }
    published += batch;
  }
  await publisher.close();
  const seconds = (Date.now() - publishStarted) / 1000;
  console.log(`[${kind}] ${ordering}: published ${published} messages over ${KEYS} keys in ${seconds} s`);
  return topic;
}

async function runClient(kind, serviceUrl) {
  // A topic per mode: the unordered mode's retry copies go back to its topic, where another subscription would
  // see them too.
  const results = {};
  for (const [ordering, subscription] of [
    ['none', 'unordered'],
    ['key', 'by-key'],
  ]) {
    const topic = await backlogFor(kind, serviceUrl, ordering, subscription);
    results[ordering] = await drain(serviceUrl, topic, ordering, subscription);
  }
  for (const [ordering, r] of Object.entries(results)) {
    console.log(
      kind.padEnd(10),
      ordering.padEnd(9),
      String(CONCURRENCY).padStart(11),
      r.perSecond.toFixed(0).padStart(8),
      String(r.violations).padStart(11),
      String(r.failedOnce).padStart(12),
      `${r.acked}/${COUNT}`.padStart(16),
      String(r.terminalOther).padStart(15),
      r.outcome === 'done' ? '' : ' (timed out)',
    );
  }
  console.log(`${kind}: ordering 'key' / 'none' = ${(results.key.perSecond / results.none.perSecond).toFixed(2)}`);
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
  const only = process.env.BENCH_CLIENT;
  console.log(
    `one instance draining ${COUNT} messages over ${KEYS} keys, a tenth failing once, handler ${HANDLER_MS} ms`,
  );
  console.log(
    'client'.padEnd(10),
    'ordering'.padEnd(9),
    'concurrency'.padStart(11),
    'msg/s'.padStart(8),
    'violations'.padStart(11),
    'failed once'.padStart(12),
    'acknowledged'.padStart(16),
    'dead/dropped'.padStart(15),
  );
  for (const [kind, serviceUrl] of clients) if (!only || only === kind) await runClient(kind, serviceUrl);
} finally {
  if (broker.started) await stopBroker();
}
// A WebSocket run left a handle open after every app had closed (not investigated yet): end once the figures are out.
process.exit(0);
