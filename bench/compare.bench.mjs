// Benchmark (not a test), `npm run bench compare`: this transport against the raw clients and the Python SDK, in
// one run, against the real broker. Figures only: drain msg/s and CPU µs per message (medians of interleaved
// rounds), publish rates, p50/p99 publish→handler latency at a fixed rate, heap and RSS across a long soak.
// The transport is measured as users build it: a module-built app (BabelQueueModule.forRoot({ serviceUrl }), the
// module's server as the strategy, bench/module-app.mjs), with one row of the same app handed a raw native Client.
//
// BENCH_MESSAGES (default 20000) per drain, BENCH_ROUNDS (3), BENCH_SOAK (100000 per concurrency; 0 skips),
// BENCH_RATE (500 msg/s for the latency runs), BENCH_PYTHON=0 skips the Python peer. BENCH_BASELINE=<path to another
// build's dist/esm/index.js> adds that build's transport at c8 to the same interleaved rounds (before/after figures).
// BENCH_RECEIVER_QUEUE (`default`: the library's own) is the transport's receiverQueueSize.
import 'reflect-metadata';
import { Controller, Injectable, UseGuards, UseInterceptors, UsePipes } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as lib from '../dist/esm/index.js';
import { pulsarProperties } from '../dist/esm/pulsar/index.js';
import { ensureBroker, stopBroker } from '../scripts/lib/broker.mjs';
import { ensureNativeClient } from '../scripts/lib/native-client.mjs';
import { ensurePythonPeer } from '../scripts/interop/setup-python.mjs';
import { startModuleApp } from './module-app.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_MESSAGES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SOAK = Number(process.env.BENCH_SOAK ?? 100_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
/** The transport's receiver queue: the library's default unless BENCH_RECEIVER_QUEUE gives a number. */
const RECEIVER_QUEUE = process.env.BENCH_RECEIVER_QUEUE ?? 'default';
const URN = 'urn:babel:bench:tick';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

ensureNativeClient();
const Native = createRequire(path.join(root, 'package.json'))('pulsar-client');
const broker = await ensureBroker();
const nativeUrl = broker.serviceUrl;
const webUrl = broker.webUrl;
const uniqueTopic = (name) => `bench-${name}-${randomUUID().slice(0, 8)}`;
const baseline = process.env.BENCH_BASELINE ? await import(path.resolve(process.env.BENCH_BASELINE)) : null;

/** A 345-byte-class envelope, as the issue measured. */
function envelope(i) {
  const env = lib.EnvelopeCodec.make(URN, { order_id: `A-${i}`, sku: 'BOOK-0001', quantity: 2, note: 'Café ☕' });
  return { data: lib.EnvelopeCodec.encodeToBuffer(env), properties: pulsarProperties(env) };
}

/** Publishes `count` envelopes with a batching native producer (fast), before any consumer runs. */
async function prepublish(topic, count) {
  const client = new Native.Client({ serviceUrl: nativeUrl });
  const producer = await client.createProducer({
    topic,
    batchingEnabled: true,
    batchingMaxMessages: 1000,
    blockIfQueueFull: true,
  });
  const sends = [];
  for (let i = 0; i < count; i++) {
    sends.push(producer.send(envelope(i)));
    if (sends.length >= 5000) await Promise.all(sends.splice(0));
  }
  await Promise.all(sends);
  await producer.flush();
  await producer.close();
  await client.close();
}

/** Measures from the first message to the last: wall time and process CPU. */
function meter(count) {
  let seen = 0;
  let start;
  let cpu;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  return {
    finished,
    tick() {
      if (seen === 0) {
        start = performance.now();
        cpu = process.cpuUsage();
      }
      seen += 1;
      if (seen === count) {
        const used = process.cpuUsage(cpu);
        done({ seconds: (performance.now() - start) / 1000, cpuUs: (used.user + used.system) / count });
      }
    },
  };
}

const subscription = { subscription: 'bench', subscriptionType: 'Shared', subscriptionInitialPosition: 'Earliest' };

/**
 * The floor: what any consumer honouring the contract must read of a message (body, properties, redelivery
 * count, message id), and nothing more. No decoding, no routing.
 */
function readWhatTheContractNeeds(message) {
  message.getData();
  message.getProperties();
  message.getRedeliveryCount();
  message.getMessageId();
}

/** A raw client's receive + acknowledge loop over N messages (`read` runs on each message first). */
async function receiveLoop(client, topic, read = () => {}) {
  const consumer = await client.subscribe({ topic, ...subscription, receiverQueueSize: 1000 });
  const m = meter(N);
  for (let i = 0; i < N; i++) {
    const message = await consumer.receive(30_000);
    read(message);
    await consumer.acknowledge(message);
    m.tick();
  }
  const result = await m.finished;
  await consumer.close();
  await client.close();
  return result;
}

/**
 * The raw native client's receive() without a time-out, acknowledging without waiting, as the transport takes
 * native messages: the addon answers from its receiver queue (with a time-out, a receive is a libuv work item).
 */
async function receiveWithoutTimeout(topic, read = () => {}) {
  const client = new Native.Client({ serviceUrl: nativeUrl });
  const consumer = await client.subscribe({ topic, ...subscription, receiverQueueSize: 1000 });
  const m = meter(N);
  for (let i = 0; i < N; i++) {
    const message = await consumer.receive();
    read(message);
    consumer.acknowledge(message);
    m.tick();
  }
  const result = await m.finished;
  await consumer.close();
  await client.close();
  return result;
}

/** The raw native client's push `listener`: acknowledges each message (`read` runs on it first). */
async function listenerDrain(topic, read = () => {}) {
  const client = new Native.Client({ serviceUrl: nativeUrl });
  const m = meter(N);
  const consumer = await client.subscribe({
    topic,
    ...subscription,
    receiverQueueSize: 1000,
    listener: (message, c) => {
      read(message);
      c.acknowledge(message);
      m.tick();
    },
  });
  const result = await m.finished;
  await consumer.close();
  await client.close();
  return result;
}

/** The raw native client's batchReceive() in a loop (batches of up to 100, or what came within 100 ms). */
async function batchReceiveDrain(topic, read = () => {}) {
  const client = new Native.Client({ serviceUrl: nativeUrl });
  const consumer = await client.subscribe({
    topic,
    ...subscription,
    receiverQueueSize: 1000,
    batchReceivePolicy: { maxNumMessages: 100, maxNumBytes: -1, timeoutMs: 100 },
  });
  const m = meter(N);
  for (let seen = 0; seen < N;) {
    for (const message of await consumer.batchReceive()) {
      read(message);
      consumer.acknowledge(message);
      m.tick();
      seen += 1;
    }
  }
  const result = await m.finished;
  await consumer.close();
  await client.close();
  return result;
}

const consumers = {
  'raw native, listener': (topic) => listenerDrain(topic),
  'raw native, listener, contract reads': (topic) => listenerDrain(topic, readWhatTheContractNeeds),
  'raw native, receive + acknowledge': (topic) => receiveLoop(new Native.Client({ serviceUrl: nativeUrl }), topic),
  'raw native, receive, contract reads': (topic) =>
    receiveLoop(new Native.Client({ serviceUrl: nativeUrl }), topic, readWhatTheContractNeeds),
  'raw native, receive without time-out, contract reads': (topic) =>
    receiveWithoutTimeout(topic, readWhatTheContractNeeds),
  'raw native, batchReceive, contract reads': (topic) => batchReceiveDrain(topic, readWhatTheContractNeeds),
  'raw WebSocket, receive + acknowledge': (topic) =>
    receiveLoop(new lib.PulsarWebSocketClient({ serviceUrl: webUrl }), topic),
  'raw WebSocket, contract reads': (topic) =>
    receiveLoop(new lib.PulsarWebSocketClient({ serviceUrl: webUrl }), topic, readWhatTheContractNeeds),
};
for (const kind of ['native', 'websocket']) {
  for (const concurrency of [1, 8, 32]) {
    consumers[`transport, ${kind}, concurrency ${concurrency}`] = (topic) =>
      drainWithTransport(kind, topic, concurrency, N);
  }
  consumers[`transport, ${kind}, c8, guard + pipe + interceptor`] = (topic) =>
    drainWithTransport(kind, topic, 8, N, { guarded: true });
  // The same app handed a raw client instead of a service URL: the module's own client must not be slower.
  consumers[`transport, ${kind}, c8, module handed a raw client`] = (topic) =>
    drainWithTransport(kind, topic, 8, N, { raw: true });
  if (baseline) {
    consumers[`baseline build, ${kind}, concurrency 8`] = (topic) =>
      drainWithTransport(kind, topic, 8, N, { build: baseline });
    consumers[`baseline build, ${kind}, c8, guard + pipe + interceptor`] = (topic) =>
      drainWithTransport(kind, topic, 8, N, { build: baseline, guarded: true });
  }
}

/** A handler with one guard, one pipe and one interceptor: Nest's pipeline, the user's choice. */
class AllowGuard {
  canActivate() {
    return true;
  }
}
Injectable()(AllowGuard);
class IdentityPipe {
  transform(value) {
    return value;
  }
}
class PassInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(PassInterceptor);

function benchControllers(onMessage, { guarded = false, build = lib, awaits = false } = {}) {
  class Sink {
    consume(data) {
      if (!awaits) return onMessage(data);
      // A handler that awaits something (here the next turn of the event loop), as real handlers do.
      return new Promise((resolve) => setImmediate(resolve)).then(() => onMessage(data));
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  if (guarded) {
    UseInterceptors(PassInterceptor)(Sink.prototype, 'consume', descriptor);
    UsePipes(new IdentityPipe())(Sink.prototype, 'consume', descriptor);
    UseGuards(AllowGuard)(Sink.prototype, 'consume', descriptor);
  }
  build.BabelHandler(URN)(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);
  return [Sink];
}

const newClientOf = (kind, build = lib) =>
  kind === 'native'
    ? new Native.Client({ serviceUrl: nativeUrl })
    : new build.PulsarWebSocketClient({ serviceUrl: webUrl });

/** A module-built app consuming `topic` (from the service URL, or handed a raw client with `shape.raw`). */
async function startTransport(kind, topic, concurrency, onMessage, shape = {}) {
  const build = shape.build ?? lib;
  const raw = shape.raw ? newClientOf(kind, build) : null;
  const running = await startModuleApp({
    lib: build,
    connection: raw ? { client: raw } : { serviceUrl: kind === 'native' ? nativeUrl : webUrl },
    topic,
    consumer: {
      concurrency,
      ...(RECEIVER_QUEUE !== 'default' && { receiverQueueSize: Number(RECEIVER_QUEUE) }),
      subscriptionInitialPosition: 'Earliest',
      subscription: 'bench',
    },
    controllers: benchControllers(onMessage, shape),
  });
  return {
    publisher: running.client,
    async close() {
      await running.close();
      await raw?.close();
    },
  };
}

async function drainWithTransport(kind, topic, concurrency, count, shape = {}) {
  const m = meter(count);
  const running = await startTransport(kind, topic, concurrency, () => m.tick(), shape);
  const result = await m.finished;
  await running.close();
  return result;
}

function drainWithPython(python, topic) {
  const run = spawnSync(
    python,
    [path.join(root, 'bench', 'peers', 'python_drain.py'), nativeUrl, topic, URN, String(N)],
    {
      encoding: 'utf8',
      timeout: 600_000,
    },
  );
  const line = (run.stdout ?? '').trim().split('\n').pop();
  if (run.status !== 0 || !line) throw new Error(`python peer failed: ${run.stderr?.slice(-2000)}`);
  const { handled, seconds, cpuSeconds } = JSON.parse(line);
  if (handled < N) throw new Error(`python peer handled ${handled} of ${N}`);
  return { seconds, cpuUs: (cpuSeconds * 1e6) / N };
}

// ------------------------------------------------------------------------------------------------ drains
let python = null;
if (process.env.BENCH_PYTHON !== '0') {
  try {
    python = (await ensurePythonPeer()).python;
    consumers['Python SDK consumer, no-op handler'] = (topic) => drainWithPython(python, topic);
  } catch (error) {
    console.log(`(Python peer unavailable: ${error.message})`);
  }
}

const drains = {};
try {
  console.log(`drain: ${N} pre-published envelopes per run, ${ROUNDS} interleaved rounds, medians`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, drain] of Object.entries(consumers)) {
      const topic = uniqueTopic('drain');
      await prepublish(topic, N);
      const result = await drain(topic);
      (drains[name] ??= []).push(result);
      process.stdout.write(`  round ${round}: ${name}: ${(N / result.seconds).toFixed(0)} msg/s\n`);
    }
  }
  const rows = Object.entries(drains).map(([name, runs]) => ({
    name,
    rate: median(runs.map((r) => N / r.seconds)),
    cpuUs: median(runs.map((r) => r.cpuUs)),
  }));
  console.log(`\n${'consumer'.padEnd(52)}${'msg/s'.padStart(10)}${'CPU µs/msg'.padStart(12)}`);
  for (const row of rows)
    console.log(`${row.name.padEnd(52)}${row.rate.toFixed(0).padStart(10)}${row.cpuUs.toFixed(0).padStart(12)}`);
  const rate = (name) => rows.find((r) => r.name === name);
  const ratio = (a, b) => (rate(a) && rate(b) ? (rate(a).rate / rate(b).rate).toFixed(2) : 'n/a');
  const cpuRatio = (a, b) => (rate(a) && rate(b) ? (rate(a).cpuUs / rate(b).cpuUs).toFixed(2) : 'n/a');
  const nativeFloor = 'raw native, listener, contract reads';
  const webSocketFloor = 'raw WebSocket, contract reads';
  const pythonPeer = 'Python SDK consumer, no-op handler';
  const batchLoop = 'raw native, batchReceive, contract reads';
  const native8 = 'transport, native, concurrency 8';
  const webSocket8 = 'transport, websocket, concurrency 8';
  const targets = [
    ['native c8 / raw batchReceive loop', ratio(native8, batchLoop), '≥ 0.8'],
    [
      'native c8 / same app handed a raw Client',
      ratio(native8, 'transport, native, c8, module handed a raw client'),
      '≥ 0.95',
    ],
    ['native c8 / WebSocket c8', ratio(native8, webSocket8), '≥ 1'],
    ['native c8 / Python SDK', ratio(native8, pythonPeer), '≥ 1.5'],
    ['CPU/msg native c8 / raw batchReceive loop', cpuRatio(native8, batchLoop), '≤ 1.5'],
    ['WebSocket c8 / WebSocket floor', ratio(webSocket8, webSocketFloor), '≥ 0.9'],
    [
      'WebSocket c8 / same app handed a raw client',
      ratio(webSocket8, 'transport, websocket, c8, module handed a raw client'),
      '≥ 0.95',
    ],
    ['native c8 / native listener floor', ratio(native8, nativeFloor), '≥ 0.8'],
    ['native c1 / native floor', ratio('transport, native, concurrency 1', nativeFloor), '≥ 0.6'],
    ['WebSocket c1 / WebSocket floor', ratio('transport, websocket, concurrency 1', webSocketFloor), '≥ 0.5'],
    [
      'native guarded c8 / native floor',
      ratio('transport, native, c8, guard + pipe + interceptor', nativeFloor),
      '≥ 0.5',
    ],
    [
      'WebSocket guarded c8 / WebSocket floor',
      ratio('transport, websocket, c8, guard + pipe + interceptor', webSocketFloor),
      '≥ 0.5',
    ],
    ['CPU/msg native c8 / native floor', cpuRatio(native8, nativeFloor), '≤ 1.5'],
    // The transport takes native messages with receive() without a time-out: its own raw path, for reference.
    [
      'native c8 / raw receive without time-out',
      ratio(native8, 'raw native, receive without time-out, contract reads'),
      '-',
    ],
    ['CPU/msg WebSocket c8 / WebSocket floor', cpuRatio(webSocket8, webSocketFloor), '≤ 1.5'],
  ];
  console.log('\nratios (target):');
  for (const [name, value, target] of targets) console.log(`  ${name.padEnd(46)} ${value.padStart(5)} (${target})`);

  // ---------------------------------------------------------------------------------------------- publishing
  const PUB = Math.min(N, 2000);
  const publishRate = async (send, count, inFlight) => {
    const started = performance.now();
    const pending = new Set();
    for (let i = 0; i < count; i++) {
      const p = send(i).finally(() => pending.delete(p));
      pending.add(p);
      if (pending.size >= inFlight) await Promise.race(pending);
    }
    await Promise.all(pending);
    return count / ((performance.now() - started) / 1000);
  };
  // Interleaved rounds, as the drains: raw and ours alternate which goes first, and each side's median is kept.
  const rawPublish = async (inFlight) => {
    const rawClient = new Native.Client({ serviceUrl: nativeUrl });
    const raw = await rawClient.createProducer({ topic: uniqueTopic('pub'), batchingEnabled: inFlight > 1 });
    await raw.send(envelope(-1));
    const rate = await publishRate((i) => raw.send(envelope(i)), PUB, inFlight);
    await raw.close();
    await rawClient.close();
    return rate;
  };
  const ourPublish = async (inFlight) => {
    const rawClient = new Native.Client({ serviceUrl: nativeUrl });
    const publisher = new lib.BabelPulsarClient({ client: rawClient, topic: uniqueTopic('pub') });
    await publisher.publish(URN, { warm: true });
    const rate = await publishRate((i) => publisher.publish(URN, { i }), PUB, inFlight);
    await publisher.close();
    await rawClient.close();
    return rate;
  };
  const publishing = [];
  for (const inFlight of [1, 64]) {
    const rawRates = [];
    const ourRates = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        rawRates.push(await rawPublish(inFlight));
        ourRates.push(await ourPublish(inFlight));
      } else {
        ourRates.push(await ourPublish(inFlight));
        rawRates.push(await rawPublish(inFlight));
      }
    }
    publishing.push({ inFlight, rawRate: median(rawRates), ourRate: median(ourRates) });
  }
  console.log(`\npublishing over native, ${PUB} messages, medians of ${ROUNDS} interleaved rounds:`);
  for (const { inFlight, rawRate, ourRate } of publishing) {
    console.log(
      `  ${inFlight === 1 ? 'awaited one by one' : '64 in flight      '}: raw ${rawRate.toFixed(0)} msg/s (batching ${inFlight > 1 ? 'on' : 'off'}), BabelPulsarClient.publish ${ourRate.toFixed(0)} msg/s, ratio ${(ourRate / rawRate).toFixed(2)} (≥ 0.95)`,
    );
  }

  // ---------------------------------------------------------------------------------------------- latency
  console.log(`\nlatency publish → handler at ${RATE} msg/s, concurrency 8, module-built app publishing itself:`);
  for (const kind of ['native', 'websocket']) {
    const topic = uniqueTopic('latency');
    const latencies = [];
    const count = RATE * 4;
    const running = await startTransport(kind, topic, 8, (data) => latencies.push(performance.now() - data.t));
    const publisher = running.publisher;
    await publisher.publish(URN, { t: performance.now() });
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      void publisher.publish(URN, { t: performance.now() });
    }
    const deadline = Date.now() + 60_000;
    while (latencies.length < count + 1 && Date.now() < deadline) await sleep(50);
    await running.close();
    const sorted = latencies.slice(1).sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]?.toFixed(1);
    console.log(`  ${kind.padEnd(10)} p50 ${pct(50)} ms, p99 ${pct(99)} ms (${sorted.length} messages)`);
  }

  // ---------------------------------------------------------------------------------------------- soak
  if (SOAK > 0) {
    console.log(`\nmemory across ${SOAK} messages (native transport; heap after a forced GC):`);
    const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
    for (const [concurrency, awaits] of [1, 8, 32].flatMap((c) => [
      [c, false],
      [c, true],
    ])) {
      const topic = uniqueTopic('soak');
      await prepublish(topic, SOAK);
      globalThis.gc?.();
      const before = process.memoryUsage();
      const result = await drainWithTransport('native', topic, concurrency, SOAK, { awaits });
      await sleep(200);
      globalThis.gc?.();
      const after = process.memoryUsage();
      console.log(
        `  concurrency ${String(concurrency).padEnd(3)} ${awaits ? 'awaiting' : 'no-op   '} heap ${mib(before.heapUsed)} → ${mib(after.heapUsed)} MiB (${(after.heapUsed - before.heapUsed) / 2 ** 20 >= 0 ? '+' : ''}${mib(after.heapUsed - before.heapUsed)}), RSS ${mib(before.rss)} → ${mib(after.rss)} MiB, ${(SOAK / result.seconds).toFixed(0)} msg/s`,
      );
    }
  }
} finally {
  if (broker.started) await stopBroker();
}
process.exit(0);
