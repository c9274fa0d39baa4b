#!/usr/bin/env node
// Renders test-results/interop.json (written by the interop Jest suite) as Markdown for the README:
// a matrix SDK × direction × feature, then what each cell's test checked.
//
//   node scripts/interop/table.mjs [results.json] [--matrix-only] [--write: into docs/interop.md]
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './common.mjs';

const FEATURES = [
  [
    'envelope',
    'Envelope fields arrive exactly (URN; data with non-ASCII text, integers, 0.5, booleans, null, nesting; trace_id; meta.id; meta.lang; attempts)',
  ],
  ['properties', 'bq-* properties written by the producer, visible to the consumer'],
  ['routing', 'Consumer routes on bq-job when it differs from the body job'],
  ['delay', 'Delayed publish honoured (Shared subscription: not before the delay, arrives after)'],
  ['retry', 'A retried message shows the right attempt count on the other side'],
  ['dead-letter', "A dead-letter record decodes with the other side's codec (accepted, dead_letter block intact)"],
  ['trace', 'One trace_id kept across three hops'],
  [
    'numbers',
    'Exact numbers (integer > 2^53, 1.0, -0.0, 1e-07) written by the peer survive our retry copy byte for byte',
  ],
  [
    'otel',
    "OpenTelemetry: a trace started with the producing side's SDK (its OTel publish, or a span around ours) holds the consumer's span",
  ],
  [
    'otel-id',
    'OpenTelemetry: both consumers map trace_id to the same trace id (UUID byte for byte, upper case or without dashes too; anything else, and the all-zero UUID, SHA-256)',
  ],
];
const SDKS = [
  ['python', 'Python'],
  ['go', 'Go'],
  ['java', 'Java'],
];
const DIRECTIONS = ['to-peer', 'from-peer'];
const ICON = {
  proven: '✅ proven',
  failed: '❌ failed',
  'not-run': '⚪ not run',
  'not-applicable': '➖ not applicable',
  differs: '⚠️ differs',
};

const args = process.argv.slice(2);
const matrixOnly = args.includes('--matrix-only');
// One results file per client of this library (scripts/run-tests.mjs runs the suite once on each).
const resultDir = path.join(repoRoot, 'test-results');
const named = args.filter((a) => !a.startsWith('--'));
const files = named.length
  ? named.map((f) => ({ client: path.basename(f).includes('native') ? 'native' : 'websocket', file: f }))
  : [
      { client: 'native', file: path.join(resultDir, 'interop-native.json') },
      { client: 'websocket', file: path.join(resultDir, 'interop.json') },
    ].filter(({ file }) => fs.existsSync(file));
if (files.length === 0 || files.some(({ file }) => !fs.existsSync(file))) {
  console.error('no interop results: run npm run test:interop first');
  process.exit(1);
}
const runs = files.map(({ client, file }) => ({ client, data: JSON.parse(fs.readFileSync(file, 'utf8')) }));
const data = runs.find((r) => r.client === 'native')?.data ?? runs[0].data;
const results = runs.flatMap(({ data: d }) => d.results ?? []);
/** One cell's entry: the same status on every client, or the entries of each client where they differ. */
const find = (sdk, direction, feature) => {
  const entries = runs.map(({ client, data: d }) => ({
    client,
    entry: (d.results ?? []).find((r) => r.sdk === sdk && r.direction === direction && r.feature === feature),
  }));
  const present = entries.filter((e) => e.entry);
  if (present.length === 0) return undefined;
  const first = present[0].entry;
  if (present.length === runs.length && present.every((e) => e.entry.status === first.status)) return first;
  const split = entries.map((e) => `${e.client}: ${e.entry?.status ?? 'no result'}`).join(', ');
  return { ...first, status: 'failed', note: `the clients disagree (${split})`, evidence: split };
};
const clientsLabel =
  runs.length === 2
    ? 'this library on both of its clients, the native pulsar-client and the WebSocket API'
    : `this library over ${runs[0].client === 'native' ? 'the native pulsar-client' : 'the WebSocket API'} only`;
const sdksPresent = SDKS.filter(([sdk]) => results.some((r) => r.sdk === sdk) || data.sdks?.[sdk]);
const directionLabel = (name, direction) => (direction === 'to-peer' ? `Node → ${name}` : `${name} → Node`);
// Registry addresses stay out of the README (and so out of commits): errors keep their status, not their URL.
const redact = (text) =>
  String(text)
    .replace(/\s*\((?:GOPROXY=)?https?:\/\/[^)]*\)/g, '')
    .replace(/https?:\/\/\S+/g, 'the registry');
const cell = (text) =>
  redact(text).replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');

const notes = [];
const noteRef = (text) => {
  let index = notes.indexOf(text);
  if (index === -1) index = notes.push(text) - 1;
  return `[^${index + 1}]`;
};

const lines = [];
const versions = sdksPresent.map(([sdk, name]) => {
  const entry = data.sdks?.[sdk];
  if (!entry) return `${name}: no results`;
  if (entry.setup !== 'ok') return `${name}: **not tested** — ${redact(entry.reason?.split('\n')[0])}`;
  const pins = Object.entries(entry.versions ?? {})
    .map(([module, version]) => `${module} ${version}`)
    .join(', ');
  return `${name}: ${pins}`;
});
lines.push(
  `Interop proven against a real Apache Pulsar broker (run ${String(data.updatedAt).slice(0, 10)}; ${clientsLabel}; the peers over the binary protocol).`,
);
lines.push('');
for (const v of versions) lines.push(`- ${v}`);
lines.push('');

const header = ['Feature', ...sdksPresent.flatMap(([, name]) => DIRECTIONS.map((d) => directionLabel(name, d)))];
lines.push(`| ${header.join(' | ')} |`);
lines.push(`|${header.map(() => '---').join('|')}|`);
for (const [feature, title] of FEATURES) {
  const row = [title];
  for (const [sdk] of sdksPresent) {
    for (const direction of DIRECTIONS) {
      const entry = find(sdk, direction, feature);
      if (!entry) {
        row.push('—');
        continue;
      }
      let text = ICON[entry.status] ?? entry.status;
      if (entry.status === 'not-run') text += ` ${noteRef(entry.evidence.split('\n')[0])}`;
      if (entry.note) text += ` ${noteRef(entry.note)}`;
      row.push(text);
    }
  }
  lines.push(`| ${row.map(cell).join(' | ')} |`);
}
lines.push('');
lines.push(
  '"Node → X": this library publishes (BabelPulsarClient, or our server\'s retry / dead-letter writes) and the X SDK consumes; "X → Node": the X SDK publishes and our Nest microservice (BabelPulsarServer, @BabelHandler) consumes. For the trace row the message makes three hops, starting on the side named first. For the OpenTelemetry rows each side traces with its own SDK\'s OpenTelemetry support and records its spans with an in-memory exporter (ours: @opentelemetry/sdk-trace-base; Python: opentelemetry-sdk; Go: go.opentelemetry.io/otel/sdk tracetest), and the test compares the trace ids.',
);
lines.push('');
for (const [i, text] of notes.entries()) lines.push(`[^${i + 1}]: ${cell(text)}`);

if (!matrixOnly) {
  lines.push('');
  lines.push('<details><summary>What each test checked</summary>');
  lines.push('');
  lines.push('| SDK | Direction | Feature | Result | Checked |');
  lines.push('|---|---|---|---|---|');
  for (const [sdk, name] of sdksPresent) {
    for (const [feature] of FEATURES) {
      for (const direction of DIRECTIONS) {
        const entry = find(sdk, direction, feature);
        // Not-run cells carry their reason as a footnote of the matrix already.
        if (!entry || entry.status === 'not-run') continue;
        lines.push(
          `| ${name} | ${directionLabel(name, direction)} | ${feature} | ${ICON[entry.status] ?? entry.status} | ${cell(entry.evidence)} |`,
        );
      }
    }
  }
  lines.push('');
  lines.push('</details>');
}
const table = `${lines.join('\n')}\n`;
if (args.includes('--write')) {
  // Replaces the block between the interop-table markers in README.md.
  const readmeFile = path.join(repoRoot, 'docs', 'interop.md');
  const readme = fs.readFileSync(readmeFile, 'utf8');
  const marked = /<!-- interop-table:start -->[\s\S]*?<!-- interop-table:end -->/;
  if (!marked.test(readme))
    throw new Error('docs/interop.md has no <!-- interop-table:start --> ... <!-- interop-table:end --> block');
  fs.writeFileSync(
    readmeFile,
    readme.replace(marked, () => `<!-- interop-table:start -->\n${table}<!-- interop-table:end -->`),
  );
  console.log('docs/interop.md interop table updated');
} else {
  process.stdout.write(table);
}
