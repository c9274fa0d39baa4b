// Publishing over native, for profiling (`node bench/publish-one.mjs <raw|ours> <in flight> [count]`): the raw
// producer (batching off when awaited one by one, as bench/compare.bench.mjs) or BabelPulsarClient.publish.
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import * as lib from '../dist/esm/index.js';
import { pulsarProperties } from '../dist/esm/pulsar/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const Native = createRequire(path.join(root, 'package.json'))('pulsar-client');
const [which = 'ours', inFlightText = '1', countText = '2000'] = process.argv.slice(2);
const inFlight = Number(inFlightText);
const count = Number(countText);
const URN = 'urn:babel:bench:tick';
const client = new Native.Client({ serviceUrl: 'pulsar://127.0.0.1:6650' });
const topic = `bench-pub-${randomUUID().slice(0, 8)}`;
const envelope = (i) => {
  const env = lib.EnvelopeCodec.make(URN, { i });
  return { data: lib.EnvelopeCodec.encodeToBuffer(env), properties: pulsarProperties(env) };
};
let send;
let close;
if (which === 'raw') {
  const producer = await client.createProducer({
    topic,
    batchingEnabled: inFlight > 1,
    ...(process.env.BENCH_KEY_BATCHING === '1' && {
      batchingType: 'KeyBasedBatching',
      hashingScheme: 'JavaStringHash',
    }),
  });
  send = (i) => producer.send(envelope(i));
  close = () => producer.close();
} else {
  const publisher = new lib.BabelPulsarClient({ client, topic });
  await publisher.publish(URN, { warm: true });
  send = (i) => publisher.publish(URN, { i });
  close = () => publisher.close();
}
await send(-1);
const started = performance.now();
const cpu = process.cpuUsage();
const pending = new Set();
for (let i = 0; i < count; i++) {
  const p = send(i).finally(() => pending.delete(p));
  pending.add(p);
  if (pending.size >= inFlight) await Promise.race(pending);
}
await Promise.all(pending);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
await close();
await client.close();
console.log(
  JSON.stringify({
    which,
    inFlight,
    rate: Math.round(count / seconds),
    cpuUs: Math.round((used.user + used.system) / count),
  }),
);
process.exit(0);
