// Drives the interop peers (test/interop/peers/<sdk>): small programs of ours on the public API of the
// other BabelQueue SDKs, installed from their registries (or, for Go, the vendored release) by
// scripts/interop/setup-<sdk>.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type PeerSdk = 'python' | 'go' | 'java';

export interface PeerInfo {
  sdk: PeerSdk;
  /** Executable and leading arguments (the venv's python + peer.py, the Go peer binary, or java -cp … Peer). */
  command: string;
  args: string[];
  versions: Record<string, string>;
  cached: boolean;
}

/** Setup outcome: the peer, or why it cannot run here. */
export type PeerSetup = { ok: true; peer: PeerInfo } | { ok: false; code: string; step: string | null; reason: string };

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const serviceUrl = (): string => process.env.PULSAR_SERVICE_URL ?? 'pulsar://127.0.0.1:6650';

/** Runs scripts/interop/setup-<sdk>.mjs (idempotent; fast when cached). */
export function setupPeer(sdk: PeerSdk, env: NodeJS.ProcessEnv = process.env): PeerSetup {
  const script = path.join(repoRoot, 'scripts', 'interop', `setup-${sdk}.mjs`);
  const result = spawnSync(process.execPath, [script, '--json'], { encoding: 'utf8', timeout: 15 * 60_000, env });
  const lines = (result.stdout ?? '').trim().split('\n').filter(Boolean);
  const last = lines.length ? JSON.parse(lines[lines.length - 1]!) : null;
  if (result.status === 0 && last?.ok !== false) {
    // A setup may describe the command itself (java + its arguments); else the Python / Go shapes.
    const command = last.command ?? (sdk === 'python' ? last.python : last.binary);
    const args = last.args ?? (sdk === 'python' ? [last.peer] : []);
    return { ok: true, peer: { sdk, command, args, versions: last.versions, cached: last.cached } };
  }
  return {
    ok: false,
    code: last?.code ?? 'SETUP_FAILED',
    step: last?.step ?? null,
    reason:
      last?.reason ??
      `setup-${sdk}.mjs exited with ${result.status}: ${(result.stderr ?? '').trim() || result.error?.message}`,
  };
}

/** What a peer wrote for one handler call (one JSON line). */
export interface PeerRecord {
  sdk: PeerSdk;
  sdkVersion: string;
  /** The URN of the handler that ran. */
  handler: string;
  outcome: 'ok' | 'failed';
  /** The envelope as the SDK decoded it (attempts as the SDK reconciled them). */
  envelope: Record<string, any>;
  /** What the SDK reports as attempts. */
  attempts: number;
  /** The language type the SDK decoded each data value into. */
  dataTypes: any;
  /** The SDK codec's accepts() verdict on that envelope. */
  accepted: boolean;
  /** The URN the SDK routed on, when it reports one. */
  routeUrn: string | null;
  properties: Record<string, string>;
  redeliveryCount: number | null;
  topic: string | null;
  publishTimestamp: number | null;
  rawBody: string | null;
  /** The SDK's own re-encoding of the envelope it decoded, where the peer reports it (Go). */
  encodedBody?: string;
  /** With --otel: the span active in the handler (the SDK's CONSUMER span). */
  activeSpan?: { traceId: string; spanId: string };
  receivedAt: number;
  forwarded?: { topic: string; urn: string; id: string };
  /** With `gdpr`: the data after the SDK unprotected its marked fields. */
  clearData?: Record<string, any>;
}

export interface ProducedLine {
  event: 'produced';
  id: string;
  urn: string;
  traceId: string | null;
  delayMs: number;
  sentAt: number;
  how: string;
}

/** A span the peer's SDK finished, from its OpenTelemetry SDK's in-memory exporter (--otel). */
export interface PeerSpan {
  name: string;
  /** PRODUCER, CONSUMER, … */
  kind: string;
  /** 32 hex digits. */
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  parentRemote: boolean | null;
  attributes: Record<string, unknown>;
  /** UNSET, OK or ERROR. */
  status: string;
}

export interface PeerMessage {
  urn: string;
  data: Record<string, unknown>;
  traceId?: string;
  delayMs?: number;
  /** Pin bq-job to this URN while the body keeps `urn` (only where the SDK can). */
  routeUrn?: string;
  /** Publish one envelope this many times, every copy with the same meta.id (Python peer only). */
  copies?: number;
}

const jsonLines = (text: string): any[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));

/** `peer produce`: publishes each message with the SDK and returns every JSON line it printed. */
function runProduce(
  peer: PeerInfo,
  topic: string,
  messages: PeerMessage[] | string,
  extra: string[],
  timeoutMs: number,
) {
  return new Promise<any[]>((resolve, reject) => {
    const child = spawn(
      peer.command,
      [...peer.args, 'produce', '--service-url', serviceUrl(), '--topic', topic, '--input', '-', ...extra],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`${peer.sdk} peer produce exited with ${code ?? signal}\n${stderr.trim()}`));
        return;
      }
      resolve(jsonLines(stdout));
    });
    // A string is sent as is: JSON text with numbers JavaScript cannot hold (2^64, 1.0).
    child.stdin.end(typeof messages === 'string' ? messages : JSON.stringify(messages));
  });
}

/** `peer produce`: publishes each message with the SDK and returns what it printed. */
export async function peerProduce(
  peer: PeerInfo,
  topic: string,
  messages: PeerMessage[] | string,
  timeoutMs = 30_000,
): Promise<ProducedLine[]> {
  const lines = await runProduce(peer, topic, messages, [], timeoutMs);
  return lines.filter((line) => line.event === 'produced');
}

/** GDPR field encryption in the peer (Python only): the AES key and the schema with x-gdpr-sensitive marks. */
export interface PeerGdpr {
  key: Buffer;
  schema: object;
}

const gdprArgs = (gdpr: PeerGdpr | undefined): string[] =>
  gdpr ? ['--gdpr-key', gdpr.key.toString('hex'), '--gdpr-schema', JSON.stringify(gdpr.schema)] : [];

/** `peer produce --gdpr-key … --gdpr-schema …`: publishes with the marked fields protected by the SDK. */
export async function peerProduceProtected(
  peer: PeerInfo,
  topic: string,
  messages: PeerMessage[],
  gdpr: PeerGdpr,
  timeoutMs = 30_000,
): Promise<ProducedLine[]> {
  const lines = await runProduce(peer, topic, messages, gdprArgs(gdpr), timeoutMs);
  return lines.filter((line) => line.event === 'produced');
}

/** `peer produce --otel`: publishes with the SDK's OpenTelemetry publish; also returns the spans it recorded. */
export async function peerProduceTraced(
  peer: PeerInfo,
  topic: string,
  messages: PeerMessage[],
  timeoutMs = 30_000,
): Promise<{ produced: ProducedLine[]; spans: PeerSpan[] }> {
  const lines = await runProduce(peer, topic, messages, ['--otel'], timeoutMs);
  return {
    produced: lines.filter((line) => line.event === 'produced'),
    spans: lines.find((line) => line.event === 'spans')?.spans ?? [],
  };
}

export interface ConsumeOptions {
  topic: string;
  subscription: string;
  /** URNs the peer registers a handler for. */
  handle: string[];
  /** Stop after this many successful handler calls. */
  count?: number;
  /** Stop after this many handler calls, failed ones included. */
  calls?: number;
  /** URN → how many times the handler fails for each message before it succeeds. */
  fail?: Record<string, number>;
  /** URN → publish onward to { topic, urn } with the same trace id. */
  forward?: Record<string, { topic: string; urn: string }>;
  maxAttempts?: number;
  deadLetter?: boolean;
  /** Wrap every handler in the SDK's OpenTelemetry consumer span; spans() then gives what it recorded. */
  otel?: boolean;
  /** Unprotect the marked fields in the handler (Python only); the record's `clearData` is the result. */
  gdpr?: PeerGdpr;
  timeoutMs?: number;
}

export interface RunningPeerConsumer {
  /** Resolves when the peer stopped (count reached): every record it wrote. */
  finished: Promise<PeerRecord[]>;
  /** Records written so far. */
  records(): PeerRecord[];
  /** With `otel`: the spans the peer printed when it stopped (empty before). */
  spans(): PeerSpan[];
  /** Stops the peer (SIGTERM) if it is still running. */
  stop(): Promise<void>;
}

/** `peer consume`: resolves once the peer has subscribed ("ready"). */
export async function startPeerConsumer(peer: PeerInfo, options: ConsumeOptions): Promise<RunningPeerConsumer> {
  const out = path.join(os.tmpdir(), `bq-interop-${peer.sdk}-${randomUUID()}.jsonl`);
  fs.writeFileSync(out, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const args = [
    ...peer.args,
    'consume',
    '--service-url',
    serviceUrl(),
    '--topic',
    options.topic,
    '--subscription',
    options.subscription,
    '--out',
    out,
    '--timeout',
    String(timeoutMs / 1000),
    '--max-attempts',
    String(options.maxAttempts ?? 3),
  ];
  if (options.count) args.push('--count', String(options.count));
  if (options.calls) args.push('--calls', String(options.calls));
  for (const urn of options.handle) args.push('--handle', urn);
  for (const [urn, times] of Object.entries(options.fail ?? {})) args.push('--fail', `${urn}=${times}`);
  for (const [urn, to] of Object.entries(options.forward ?? {})) args.push('--forward', `${urn}=${to.topic}=${to.urn}`);
  if (options.deadLetter) args.push('--dead-letter');
  if (options.otel) args.push('--otel');
  args.push(...gdprArgs(options.gdpr));

  const child = spawn(peer.command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const read = (): PeerRecord[] => jsonLines(fs.readFileSync(out, 'utf8'));
  let exited = false;
  const finished = new Promise<PeerRecord[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      exited = true;
      const records = read();
      fs.rmSync(out, { force: true });
      if (code === 0) resolve(records);
      else {
        const error = new Error(
          `${peer.sdk} peer consume on ${options.topic} ended with ${code ?? signal} after ${records.length} handler call(s)\n` +
            `${jsonLines(stdout)
              .map((l) => JSON.stringify(l))
              .join('\n')}\n${stderr.trim()}`,
        ) as Error & { records?: PeerRecord[] };
        error.records = records;
        reject(error);
      }
    });
  });
  finished.catch(() => undefined); // observed by the caller; never an unhandled rejection

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${peer.sdk} peer consumer did not become ready in 30 s\n${stderr}`)),
      30_000,
    );
    let ready = false;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      // Complete lines only: a long line (the spans) may arrive in several chunks.
      if (!ready && jsonLines(stdout.slice(0, stdout.lastIndexOf('\n') + 1)).some((line) => line.event === 'ready')) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    finished.catch((error) => {
      clearTimeout(timer);
      reject(error);
    });
  });

  return {
    finished,
    records: () => (exited ? [] : read()),
    spans: () => jsonLines(stdout).find((line) => line.event === 'spans')?.spans ?? [],
    stop: async () => {
      if (exited) return;
      child.kill('SIGTERM');
      await finished.catch(() => undefined);
    },
  };
}
