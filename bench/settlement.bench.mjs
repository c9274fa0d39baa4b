// Benchmark (not a test): the consumer's per-message decision cost (inspect + decideSettlement, the pure part of
// settlement) and its memory, for the paths a message can take. Figures are printed, never asserted.
// Run with `npm run bench settlement` (builds first). BENCH_MS=<ms per case> to tune.
import { decideSettlement, inspect } from '../dist/esm/consumer/index.js';
import { EnvelopeCodec } from '../dist/esm/envelope/index.js';
import { pulsarProperties } from '../dist/esm/pulsar/binding.js';

const CASE_MS = Number(process.env.BENCH_MS ?? 500);
const ROUND_TRIP_NS = 750_000;

const envelope = EnvelopeCodec.make(
  'urn:babel:orders:created',
  { order_id: 1042, note: 'Café ☕', lines: [1, 2, 3] },
  { queue: 'orders' },
);
const message = (properties = {}, payload = EnvelopeCodec.encodeToBuffer(envelope)) => ({
  payload,
  properties: { ...pulsarProperties(envelope), ...properties },
  redeliveryCount: 0,
  topic: 'persistent://public/default/orders',
});
const policy = { maxAttempts: 3, retryBy: 'republish', deadLetter: true, now: Date.now() };
const handled = { kind: 'handled' };
const failed = { kind: 'failed', reason: 'failed', error: new Error('boom') };

const cases = [
  ['success (ack)', message(), handled],
  ['failure → retry copy', message(), failed],
  ['failure at cap → dead-letter record', message({ 'bq-attempts': '2' }), failed],
  ['poison → poison record', message({}, Buffer.from([0x7b, 0xff, 0x7d])), handled],
  ['gate-rejected (body not decoded)', message({ 'bq-schema-version': '2' }), handled],
];

function measure(input, outcome) {
  const run = () => decideSettlement(input, inspect(input), outcome, policy);
  for (let i = 0; i < 2000; i++) run(); // warm up
  let iterations = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(CASE_MS) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 500; i++) run();
    iterations += 500;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / iterations;
}

function heapPerMessage(input, outcome, count = 20_000) {
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const kept = [];
  for (let i = 0; i < count; i++) kept.push(decideSettlement(input, inspect(input), outcome, policy));
  const after = process.memoryUsage().heapUsed;
  return kept.length ? (after - before) / count : 0;
}

console.log(`settlement decision per message (${CASE_MS} ms per case; share of a 750 µs broker round trip)`);
console.log('case'.padEnd(40), 'ns/msg'.padStart(10), 'share'.padStart(8), 'retained B/msg'.padStart(16));
for (const [name, input, outcome] of cases) {
  const ns = measure(input, outcome);
  const bytes = heapPerMessage(input, outcome);
  console.log(
    name.padEnd(40),
    ns.toFixed(0).padStart(10),
    `${((ns / ROUND_TRIP_NS) * 100).toFixed(2)}%`.padStart(8),
    bytes.toFixed(0).padStart(16),
  );
}
