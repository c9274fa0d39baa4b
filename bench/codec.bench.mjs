// Micro-benchmark (not a test): the codec's marginal cost over plain JSON.stringify / JSON.parse
// of the same message, in ns per message and as a share of a 750 µs broker round trip.
// Run after the build: `npm run build && node bench/codec.bench.mjs` (BENCH_MS=<ms per case> to tune).
import { EnvelopeCodec } from '../dist/esm/envelope/index.js';
import { pulsarProperties, reconcileAttempts, routingUrn, schemaVersionGate } from '../dist/esm/pulsar/binding.js';

const ROUND_TRIP_NS = 750_000; // a broker round trip, 750 µs
const BUDGET = 0.02; // ecosystem budget: 2 % of it
const BATCH_MS = Number(process.env.BENCH_MS ?? 400) / 20;

// ---- payloads ------------------------------------------------------------------------------------

const small = EnvelopeCodec.make('urn:babel:orders:created', { order_id: 1042 }, { queue: 'orders' });

const medium = EnvelopeCodec.make(
  'urn:babel:catalog:item.indexed',
  {
    title: 'Café — naïve ☕ <b>&</b>',
    sku: 'SKU-000123',
    price_cents: 1299,
    ratio: 0.5,
    active: true,
    note: null,
    tags: ['a', 'b', 'c', 'ünï'],
    lines: Array.from({ length: 12 }, (_, i) => ({
      line: i,
      qty: i * 3,
      price: 10.25 + i,
      name: `item ${i} — ☕`,
      flags: [true, false],
    })),
  },
  { queue: 'catalog' },
);

// Wire text a non-Node producer might send: exact numbers the codec must keep.
const exactWire = Buffer.from(
  EnvelopeCodec.encode(small).replace(
    '"order_id":1042',
    '"order_id":1042,"amount":12345678901234567890,"rate":1.0,"precise":0.1000000000000000055511151231257827',
  ),
);

const payloads = [
  ['small', EnvelopeCodec.encodeToBuffer(small)],
  ['medium', EnvelopeCodec.encodeToBuffer(medium)],
  ['exact-numbers', exactWire],
];

// ---- timing --------------------------------------------------------------------------------------

let sink = 0;
const consume = (value) => {
  sink = (sink + (typeof value === 'string' ? value.length : (value?.length ?? 1))) | 0;
};

/** CPU time of this process in ns: unlike wall time it leaves out time other processes ran. */
const cpuNs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

/** Median ns per call over 20 timed batches, each about BATCH_MS of CPU time, after a warm-up. */
function measure(fn) {
  let n = 1;
  for (;;) {
    const t0 = cpuNs();
    for (let i = 0; i < n; i++) consume(fn());
    const ms = (cpuNs() - t0) / 1e6;
    if (ms >= BATCH_MS / 4) {
      n = Math.max(1, Math.round((n * BATCH_MS) / Math.max(ms, 0.001)));
      break;
    }
    n *= 2;
  }
  const samples = [];
  for (let b = 0; b < 20; b++) {
    const t0 = cpuNs();
    for (let i = 0; i < n; i++) consume(fn());
    samples.push((cpuNs() - t0) / n);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}

// ---- cases ---------------------------------------------------------------------------------------

const props = pulsarProperties(small);
const rows = [];

for (const [name, bytes] of payloads) {
  const envelope = EnvelopeCodec.decode(bytes).envelope;
  const plain = JSON.parse(bytes.toString('utf8'));
  const cases = [
    ['encode', () => JSON.stringify(plain), () => EnvelopeCodec.encode(envelope)],
    ['decode (bytes)', () => JSON.parse(bytes.toString('utf8')), () => EnvelopeCodec.decode(bytes)],
    [
      'decode+accepts+withAttempts+encode',
      () => {
        const e = JSON.parse(bytes.toString('utf8'));
        return Buffer.from(JSON.stringify({ ...e, attempts: e.attempts + 1 }), 'utf8');
      },
      () => {
        const { envelope: e } = EnvelopeCodec.decode(bytes);
        if (!EnvelopeCodec.accepts(e)) throw new Error('not accepted');
        return EnvelopeCodec.encodeToBuffer(EnvelopeCodec.withAttempts(e, e.attempts + 1));
      },
    ],
  ];
  for (const [op, baseline, codec] of cases) {
    // Interleave so drift (turbo, GC) hits both sides alike.
    const json = Math.min(measure(baseline), measure(baseline));
    const ours = Math.min(measure(codec), measure(codec));
    rows.push({ payload: `${name} (${bytes.length} B)`, op, json, ours });
  }
}

const bindingNs = measure(() => {
  consume(pulsarProperties(small)['bq-job']);
  consume(schemaVersionGate(props['bq-schema-version']));
  consume(reconcileAttempts({ bodyAttempts: 0, attemptsProperty: props['bq-attempts'], redeliveryCount: 0 }));
  return routingUrn(props, small).urn;
});
rows.push({ payload: 'small', op: 'binding: properties+gate+reconcile+route', json: 0, ours: bindingNs });

// ---- report --------------------------------------------------------------------------------------

const fmt = (ns) => ns.toFixed(0).padStart(8);
const pct = (ns) => `${((ns / ROUND_TRIP_NS) * 100).toFixed(3)}%`.padStart(8);
console.log(`BabelQueue codec micro-benchmark — Node ${process.version}, ${process.arch}`);
console.log(
  `marginal = codec − plain JSON of the same message; share of a ${ROUND_TRIP_NS / 1000} µs round trip (budget ${BUDGET * 100}%)\n`,
);
const header = [
  'payload'.padEnd(24),
  'operation'.padEnd(40),
  'JSON ns'.padStart(8),
  'codec ns'.padStart(8),
  'marg. ns'.padStart(8),
  ' share',
  ' budget',
];
console.log(header.join(' '));
console.log('-'.repeat(header.join(' ').length));
let worst = 0;
for (const r of rows) {
  const marginal = Math.max(0, r.ours - r.json);
  worst = Math.max(worst, marginal);
  console.log(
    [
      r.payload.padEnd(24),
      r.op.padEnd(40),
      fmt(r.json),
      fmt(r.ours),
      fmt(marginal),
      pct(marginal),
      marginal / ROUND_TRIP_NS <= BUDGET ? '  ok' : '  OVER',
    ].join(' '),
  );
}
console.log(
  `\nworst marginal cost: ${worst.toFixed(0)} ns = ${pct(worst).trim()} of a round trip (budget ${(BUDGET * ROUND_TRIP_NS).toFixed(0)} ns)`,
);
if (sink === 42) console.log(''); // keeps results observable
