// Raw native receive paths on one workload (`node bench/native-paths.mjs <path> <topic>`), for choosing the
// transport's: listener, receive (a loop), batch (batchReceive in a loop). Each reads what the contract needs and
// acknowledges. BENCH_MESSAGES messages must be on the topic (bench/drain-one.mjs publish).
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const Native = createRequire(path.join(root, 'package.json'))('pulsar-client');
const N = Number(process.env.BENCH_MESSAGES ?? 20_000);
const [which = 'listener', topic] = process.argv.slice(2);
const queue = Number(process.env.BENCH_QUEUE ?? 1000);
const client = new Native.Client({ serviceUrl: 'pulsar://127.0.0.1:6650', messageListenerThreads: 1 });
const config = {
  topic,
  subscription: 'bench',
  subscriptionType: 'Shared',
  subscriptionInitialPosition: 'Earliest',
  receiverQueueSize: queue,
};
let seen = 0;
let start;
let cpu;
let done;
const finished = new Promise((resolve) => (done = resolve));
let id;
const read = (message) => {
  message.getData();
  message.getProperties();
  message.getRedeliveryCount();
  id = message.getMessageId();
};
// BENCH_ACK=id acknowledges by the id read (acknowledgeId) instead of by the message.
const byId = process.env.BENCH_ACK === 'id';
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
let consumer;
if (which === 'listener') {
  consumer = await client.subscribe({
    ...config,
    listener: (message, c) => {
      read(message);
      if (byId) c.acknowledgeId(id);
      else c.acknowledge(message);
      tick();
    },
  });
} else if (which === 'receive') {
  consumer = await client.subscribe(config);
  void (async () => {
    while (seen < N) {
      const message = await consumer.receive();
      read(message);
      consumer.acknowledge(message);
      tick();
    }
  })();
} else {
  consumer = await client.subscribe({
    ...config,
    batchReceivePolicy: { maxNumMessages: Number(process.env.BENCH_BATCH ?? 100), maxNumBytes: -1, timeoutMs: 100 },
  });
  void (async () => {
    while (seen < N) {
      for (const message of await consumer.batchReceive()) {
        read(message);
        consumer.acknowledge(message);
        tick();
      }
    }
  })();
}
const result = await finished;
await consumer.close();
await client.close();
console.log(JSON.stringify({ which, N, rate: Math.round(result.rate), cpuUs: Math.round(result.cpuUs) }));
process.exit(0);
