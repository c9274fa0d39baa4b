// Records what each interop test proved into test-results/interop.json, which
// scripts/interop/table.mjs renders as the README table (SDK × direction × feature).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PeerSdk } from './peers.js';

export const FEATURES = {
  envelope:
    'Envelope arrives exactly: URN, data (non-ASCII, integers, 0.5, booleans, null, nested), trace_id, meta.id, meta.lang, attempts',
  properties: 'bq-* properties projected by the producer and visible to the consumer',
  routing: 'Consumer routes on bq-job (property and body job differ)',
  delay: 'Delayed publish honoured on a Shared subscription (not before, arrives after)',
  retry: 'Retried message shows the right attempt count on the other side',
  'dead-letter': "Dead-letter record decodes with the other side's codec (accepted, dead_letter block intact)",
  trace: 'One trace_id kept across three hops',
  numbers: 'Exact numbers (integer > 2^53, 1.0, -0.0, 1e-07) survive our retry copy byte for byte',
  otel: "OpenTelemetry: a trace started with one side's SDK holds the other side's consumer span",
  'otel-id': 'OpenTelemetry: both sides map trace_id to the same trace id (UUID byte for byte, else SHA-256)',
} as const;
export type FeatureId = keyof typeof FEATURES;

/** to-peer: this library produces, the peer consumes. from-peer: the peer produces, this library consumes. */
export type Direction = 'to-peer' | 'from-peer';

export interface ProofEntry {
  sdk: PeerSdk;
  direction: Direction;
  feature: FeatureId;
  /**
   * not-applicable: the test ran and showed that the SDK lacks the feature (the note says why).
   * differs: the test ran and proved that the SDK behaves otherwise (the note says how).
   */
  status: 'proven' | 'failed' | 'not-run' | 'not-applicable' | 'differs';
  /** What exactly the test checked, or why it failed / did not run. */
  evidence: string;
  /** Caveat that belongs in the table (e.g. how the peer had to do something its SDK has no API for). */
  note?: string;
  test: string;
  at: string;
}

export interface SdkEntry {
  setup: 'ok' | 'unavailable';
  versions?: Record<string, string>;
  reason?: string;
  at: string;
}

export interface InteropResults {
  schema: 1;
  updatedAt: string;
  broker: { serviceUrl: string; webUrl: string };
  sdks: Partial<Record<PeerSdk, SdkEntry>>;
  results: ProofEntry[];
}

const root = fileURLToPath(new URL('../../../', import.meta.url));
// One file per client under test (scripts/run-tests.mjs runs the suites once per client).
export const resultsFile = path.join(
  root,
  'test-results',
  process.env.BQ_TEST_CLIENT === 'native' ? 'interop-native.json' : 'interop.json',
);

const pending: ProofEntry[] = [];
const pendingSdks: Partial<Record<PeerSdk, SdkEntry>> = {};

export function recordProof(entry: Omit<ProofEntry, 'at'>): void {
  pending.push({ ...entry, at: new Date().toISOString() });
}

export function recordSdk(sdk: PeerSdk, entry: Omit<SdkEntry, 'at'>): void {
  pendingSdks[sdk] = { ...entry, at: new Date().toISOString() };
}

/** Blocks the thread for `ms` (the lock wait below must also work at test-collection time). */
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Merges this worker's entries into test-results/interop.json (under a lock: suites run in parallel).
 * Synchronous, so that it can run while tests are being collected (a suite whose tests are all skipped
 * runs no hooks).
 */
export function flushResults(): void {
  if (pending.length === 0 && Object.keys(pendingSdks).length === 0) return;
  fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
  const lock = `${resultsFile}.lock`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) fs.rmSync(lock, { recursive: true, force: true });
      sleepSync(50);
    }
  }
  try {
    let current: InteropResults = {
      schema: 1,
      updatedAt: '',
      broker: { serviceUrl: '', webUrl: '' },
      sdks: {},
      results: [],
    };
    if (fs.existsSync(resultsFile)) {
      try {
        current = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as InteropResults;
      } catch {
        // a broken file is replaced
      }
    }
    // One suite file owns one SDK: its run replaces every earlier entry of that SDK, so the file never
    // mixes results of different runs.
    const key = (e: ProofEntry) => `${e.sdk}|${e.direction}|${e.feature}`;
    const fresh = new Map(pending.map((e) => [key(e), e]));
    const owned = new Set<string>([...pending.map((e) => e.sdk), ...Object.keys(pendingSdks)]);
    current.results = [...current.results.filter((e) => !owned.has(e.sdk)), ...fresh.values()];
    current.sdks = { ...current.sdks, ...pendingSdks };
    current.updatedAt = new Date().toISOString();
    current.broker = {
      serviceUrl: process.env.PULSAR_SERVICE_URL ?? 'pulsar://127.0.0.1:6650',
      webUrl: process.env.PULSAR_WEB_URL ?? 'http://127.0.0.1:8080',
    };
    fs.writeFileSync(resultsFile, `${JSON.stringify(current, null, 2)}\n`);
    pending.length = 0;
    for (const sdk of Object.keys(pendingSdks) as PeerSdk[]) delete pendingSdks[sdk];
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export interface ProofMeta {
  sdk: PeerSdk;
  direction: Direction;
  feature: FeatureId;
  /** Further features the same test proves. */
  also?: FeatureId[];
  note?: string;
  /** What a passing test records (default proven). */
  status?: 'proven' | 'not-applicable';
  /** The test proves a behaviour difference: recorded as 'differs', with this as its note. */
  differs?: string;
}

function entriesFor(meta: ProofMeta): Array<Omit<ProofEntry, 'status' | 'evidence' | 'test' | 'at'>> {
  const { also = [], status: _status, differs, ...base } = meta;
  const note = differs ?? base.note;
  return [base.feature, ...also].map((feature) => ({ ...base, ...(note && { note }), feature }));
}

/**
 * An `it` whose outcome is recorded: 'proven' (or `meta.status`, or 'differs') with the evidence string the
 * body returns, or 'failed' with the error.
 */
export function proof(meta: ProofMeta, name: string, body: () => Promise<string>, timeoutMs?: number): void {
  it(
    name,
    async () => {
      try {
        const evidence = await body();
        const status = meta.differs ? 'differs' : (meta.status ?? 'proven');
        for (const entry of entriesFor(meta)) recordProof({ ...entry, status, evidence, test: name });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const evidence = message.split('\n').slice(0, 6).join(' ').slice(0, 600);
        for (const entry of entriesFor(meta)) recordProof({ ...entry, status: 'failed', evidence, test: name });
        throw error;
      }
    },
    timeoutMs,
  );
}

/** A test that cannot run here: registered as skipped (visible in Jest's summary) and recorded as 'not-run'. */
export function notRun(meta: ProofMeta, name: string, reason: string): void {
  for (const entry of entriesFor(meta)) recordProof({ ...entry, status: 'not-run', evidence: reason, test: name });
  it.skip(`${name} — NOT RUN: ${reason.split('\n')[0]}`, () => undefined);
}
