// One drain, for profiling (`node --cpu-prof bench/drain-one.mjs <consumer> [concurrency]`): pre-publishes
// BENCH_MESSAGES envelopes, then drains them with one consumer of bench/compare.bench.mjs and prints its figures.
// consumer: floor (raw native listener, contract reads + acknowledge), native, websocket.
import 'reflect-metadata';
import { Controller, Injectable, UseGuards, UseInterceptors, UsePipes } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as lib from '../dist/esm/index.js';
import { pulsarProperties } from '../dist/esm/pulsar/index.js';
import { startModuleApp } from './module-app.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const Native = createRequire(path.join(root, 'package.json'))('pulsar-client');
const N = Number(process.env.BENCH_MESSAGES ?? 20_000);
const kind = process.argv[2] ?? 'native';
const concurrency = Number(process.argv[3] ?? 8);
const URN = 'urn:babel:bench:tick';
const serviceUrl = 'pulsar://127.0.0.1:6650';
const topic = process.argv[4] ?? `bench-prof-${randomUUID().slice(0, 8)}`;

const client = new Native.Client({ serviceUrl });
if (!process.argv[4]) await prepublish();
if (kind === 'publish') {
  await client.close();
  console.log(topic);
  process.exit(0);
}

async function prepublish() {
  const producer = await client.createProducer({
    topic,
    batchingEnabled: true,
    batchingMaxMessages: 1000,
    blockIfQueueFull: true,
  });
  const sends = [];
  for (let i = 0; i < N; i++) {
    const env = lib.EnvelopeCodec.make(URN, { order_id: `A-${i}`, sku: 'BOOK-0001', quantity: 2, note: 'Café ☕' });
    sends.push(producer.send({ data: lib.EnvelopeCodec.encodeToBuffer(env), properties: pulsarProperties(env) }));
  }
  await Promise.all(sends);
  await producer.close();
}

let seen = 0;
let start;
let cpu;
let done;
const finished = new Promise((resolve) => (done = resolve));
const tick = () => {
  if (seen === 0) {
    start = performance.now();
    cpu = process.cpuUsage();
  }
  if (++seen === N) {
    const used = process.cpuUsage(cpu);
    done({ rate: N / ((performance.now() - start) / 1000), cpuUs: (used.user + used.system) / N });
  }
};
const subscription = {
  topic,
  subscription: 'bench',
  subscriptionType: 'Shared',
  subscriptionInitialPosition: 'Earliest',
};
let close;
if (kind === 'floor') {
  const consumer = await client.subscribe({
    ...subscription,
    ...(process.env.BENCH_RECEIVER_QUEUE !== 'default' && {
      receiverQueueSize: Number(process.env.BENCH_RECEIVER_QUEUE ?? 1000),
    }),
    listener: (message, c) => {
      message.getData();
      message.getProperties();
      message.getRedeliveryCount();
      message.getMessageId();
      c.acknowledge(message);
      tick();
    },
  });
  close = () => consumer.close();
} else {
  class Sink {
    consume() {
      tick();
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Sink.prototype, 'consume');
  if (process.env.BENCH_GUARDED === '1') {
    // One guard, one pipe, one interceptor, as the compare bench's guarded handler.
    class AllowGuard {
      canActivate() {
        return true;
      }
    }
    Injectable()(AllowGuard);
    class PassInterceptor {
      intercept(_context, next) {
        return next.handle();
      }
    }
    Injectable()(PassInterceptor);
    UseInterceptors(PassInterceptor)(Sink.prototype, 'consume', descriptor);
    UsePipes({ transform: (value) => value })(Sink.prototype, 'consume', descriptor);
    UseGuards(AllowGuard)(Sink.prototype, 'consume', descriptor);
  }
  lib.BabelHandler(URN)(Sink.prototype, 'consume', descriptor);
  Controller()(Sink);
  // The app as users build it: the module from a service URL (bench/module-app.mjs).
  const running = await startModuleApp({
    lib,
    connection: { serviceUrl: kind === 'native' ? serviceUrl : 'http://127.0.0.1:8080' },
    topic,
    consumer: {
      concurrency,
      ...(process.env.BENCH_RECEIVER_QUEUE !== undefined &&
        process.env.BENCH_RECEIVER_QUEUE !== 'default' && {
          receiverQueueSize: Number(process.env.BENCH_RECEIVER_QUEUE),
        }),
      subscriptionInitialPosition: 'Earliest',
      subscription: 'bench',
    },
    controllers: [Sink],
  });
  close = () => running.close();
}
const result = await finished;
await close();
await client.close();
console.log(JSON.stringify({ kind, concurrency, N, rate: Math.round(result.rate), cpuUs: Math.round(result.cpuUs) }));
process.exit(0);
