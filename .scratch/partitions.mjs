import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const Pulsar = require('pulsar-client');
const { PulsarWebSocketClient } = await import('../dist/esm/pulsar/websocket/index.js').catch(() => ({}));
const web = 'http://127.0.0.1:8080';
const kind = process.argv[2];
const topic = `scratch-parts-${kind}-${Date.now()}`;
const admin = (method, body) => fetch(`${web}/admin/v2/persistent/public/default/${topic}/partitions`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
console.log('create', (await admin('PUT', 2)).status);
const client = kind === 'native' ? new Pulsar.Client({ serviceUrl: 'pulsar://127.0.0.1:6650' }) : new PulsarWebSocketClient({ serviceUrl: web });
const consumer = await client.subscribe({ topic, subscription: 's', subscriptionType: 'Shared', subscriptionInitialPosition: 'Earliest' });
const producer = await client.createProducer({ topic, ...(kind === 'native' ? { messageRoutingMode: 'RoundRobinDistribution', batchingEnabled: false } : {}) });
console.log('update', (await admin('POST', 4)).status);
const start = Date.now();
const seen = new Set();
let lastStats = 0;
while (Date.now() - start < 100_000) {
  await producer.send({ data: Buffer.from('x') });
  try { for (;;) { const m = await consumer.receive(200); await consumer.acknowledge(m); const p = m.getTopicName().match(/partition-(\d+)/)?.[1]; if (!seen.has(p)) { seen.add(p); console.log(`${((Date.now()-start)/1000).toFixed(1)}s consumed from partition ${p}`); } } } catch {}
  if (Date.now() - lastStats > 5000) {
    lastStats = Date.now();
    const st = await (await fetch(`${web}/admin/v2/persistent/public/default/${topic}/partitioned-stats?perPartition=true`)).json();
    const ins = Object.entries(st.partitions).map(([k, v]) => `${k.slice(-1)}:${v.msgInCounter}/${Object.values(v.subscriptions)[0]?.consumers?.length ?? 0}c`);
    console.log(`${((Date.now()-start)/1000).toFixed(1)}s in/consumers per partition ${ins.join(' ')}`);
  }
  if (seen.size === 4) break;
}
await client.close();
await fetch(`${web}/admin/v2/persistent/public/default/${topic}/partitions?force=true`, { method: 'DELETE' });
