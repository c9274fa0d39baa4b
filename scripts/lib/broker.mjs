// Starts and stops a real Apache Pulsar standalone broker on 127.0.0.1, fetched from Maven Central.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const here = path.dirname(fileURLToPath(import.meta.url));
const overridesFile = path.join(here, '..', 'pulsar', 'standalone-overrides.conf');

export const PULSAR_VERSION = process.env.PULSAR_VERSION ?? '4.0.6';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export function brokerSettings(env = process.env) {
  const webPort = Number(env.PULSAR_WEB_PORT ?? 8080);
  const brokerPort = Number(env.PULSAR_BROKER_PORT ?? 6650);
  const cacheDir =
    env.BABELQUEUE_PULSAR_CACHE ??
    path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'babelqueue-nestjs-pulsar');
  return {
    webPort,
    brokerPort,
    cacheDir,
    webUrl: `http://127.0.0.1:${webPort}`,
    serviceUrl: `pulsar://127.0.0.1:${brokerPort}`,
    stateFile: path.join(cacheDir, 'state', `broker-${webPort}.json`),
    readyTimeoutMs: Number(env.PULSAR_READY_TIMEOUT_MS ?? 240_000),
  };
}

const log = (message) => process.stderr.write(`[pulsar] ${message}\n`);

/** Downloads (once) and unpacks (once) the server distribution; returns PULSAR_HOME. */
export function ensureDistribution(settings = brokerSettings()) {
  const home = path.join(settings.cacheDir, `apache-pulsar-${PULSAR_VERSION}`);
  if (fs.existsSync(path.join(home, 'bin', 'pulsar'))) return home;
  fs.mkdirSync(settings.cacheDir, { recursive: true });
  const distDir = path.join(settings.cacheDir, 'dist');
  const tarball = path.join(distDir, `pulsar-server-distribution-${PULSAR_VERSION}-bin.tar.gz`);
  if (!fs.existsSync(tarball)) {
    log(
      `downloading org.apache.pulsar:pulsar-server-distribution:${PULSAR_VERSION} from Maven Central (~230 MB, once)`,
    );
    const mvn = spawnSync(
      'mvn',
      [
        '-B',
        '-q',
        `${DEPENDENCY_PLUGIN}:copy`,
        `-Dartifact=org.apache.pulsar:pulsar-server-distribution:${PULSAR_VERSION}:tar.gz:bin`,
        `-DoutputDirectory=${distDir}`,
        `-Dmaven.repo.local=${path.join(settings.cacheDir, 'm2')}`,
      ],
      { stdio: 'inherit' },
    );
    if (mvn.error) throw new Error(`cannot run mvn (install a JDK 17+ and Maven): ${mvn.error.message}`);
    if (mvn.status !== 0 || !fs.existsSync(tarball)) {
      throw new Error(`mvn could not fetch the Pulsar distribution (exit ${mvn.status}); see the output above`);
    }
  }
  log(`unpacking ${path.basename(tarball)}`);
  const staging = fs.mkdtempSync(path.join(settings.cacheDir, 'unpack-'));
  const tar = spawnSync('tar', ['xzf', tarball, '-C', staging], { stdio: 'inherit' });
  if (tar.status !== 0) throw new Error(`tar failed to unpack ${tarball}`);
  // Rename into place only when complete, so an interrupted unpack is never mistaken for a good one.
  fs.renameSync(path.join(staging, `apache-pulsar-${PULSAR_VERSION}`), home);
  fs.rmSync(staging, { recursive: true, force: true });
  return home;
}

export async function fetchText(url, timeoutMs = 2000) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, body: await response.text() };
  } catch {
    return null;
  }
}

/** True when a Pulsar admin API answers with the standalone cluster at webUrl. */
export async function brokerAnswers(webUrl) {
  const clusters = await fetchText(`${webUrl}/admin/v2/clusters`);
  return clusters?.status === 200;
}

export function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when `pid` is a live Pulsar standalone JVM (a recorded pid may since belong to another process). */
export function isOurBroker(pid) {
  if (!isAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('PulsarStandaloneStarter');
  } catch {
    return true; // no /proc: trust the pid
  }
}

export function tail(file, lines = 60) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no broker log)';
  }
}

/** Sends one message over the WebSocket API and reads it back: proves broker, bookie and WebSocket service. */
async function roundTrip(webUrl) {
  const wsBase = webUrl.replace(/^http/, 'ws');
  const topic = `persistent/public/default/bq-ready-${process.pid}-${Date.now()}`;
  const open = (url) =>
    new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(socket));
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
  const consumer = await open(`${wsBase}/ws/v2/consumer/${topic}/ready?subscriptionType=Shared`);
  try {
    const received = new Promise((resolve, reject) => {
      consumer.once('message', (raw) => resolve(JSON.parse(String(raw))));
      consumer.once('close', () => reject(new Error('consumer socket closed')));
    });
    const producer = await open(`${wsBase}/ws/v2/producer/${topic}`);
    try {
      producer.send(JSON.stringify({ payload: Buffer.from('ready').toString('base64') }));
      const message = await Promise.race([
        received,
        new Promise((_, reject) => setTimeout(() => reject(new Error('no message within 20 s')), 20_000).unref()),
      ]);
      return Buffer.from(message.payload, 'base64').toString() === 'ready';
    } finally {
      producer.close();
    }
  } finally {
    consumer.close();
  }
}

/** Polls until the broker is fully usable; throws with the log tail if it dies or times out. */
async function waitUntilReady(settings, pid, logFile) {
  const deadline = Date.now() + settings.readyTimeoutMs;
  const started = Date.now();
  let stage = 'cluster';
  let lastReport = 0;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) throw new Error(`Pulsar exited during start-up. Last log lines:\n${tail(logFile)}`);
    if (stage === 'cluster') {
      const clusters = await fetchText(`${settings.webUrl}/admin/v2/clusters`);
      if (clusters?.status === 200 && clusters.body.includes('"standalone"')) stage = 'namespace';
    }
    if (stage === 'namespace') {
      const namespaces = await fetchText(`${settings.webUrl}/admin/v2/namespaces/public`);
      if (namespaces?.status === 200 && namespaces.body.includes('"public/default"')) stage = 'round trip';
    }
    if (stage === 'round trip') {
      try {
        if (await roundTrip(settings.webUrl)) return;
      } catch {
        // not ready yet
      }
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      log(`waiting for the broker (${stage}), ${Math.round((Date.now() - started) / 1000)} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(
    `Pulsar was not ready within ${settings.readyTimeoutMs / 1000} s (stuck at: ${stage}). Last log lines:\n${tail(logFile)}`,
  );
}

function readState(settings) {
  try {
    return JSON.parse(fs.readFileSync(settings.stateFile, 'utf8'));
  } catch {
    return null;
  }
}

/** Writes `<runDir>/standalone.conf`: the shipped conf, the test overrides, then `lines` (the last key wins). */
export function writeStandaloneConf(home, runDir, lines) {
  const shipped = fs.readFileSync(path.join(home, 'conf', 'standalone.conf'), 'utf8');
  const overrides = fs.readFileSync(overridesFile, 'utf8');
  fs.writeFileSync(path.join(runDir, 'standalone.conf'), `${shipped}\n${overrides}\n${lines.join('\n')}\n`);
}

/**
 * Launches `bin/pulsar standalone` detached, with the conf at `<runDir>/standalone.conf` and all data in `runDir`.
 * Returns the JVM's pid (bin/pulsar execs java) and the log file.
 */
export function spawnStandalone(home, runDir, { wipe = true } = {}) {
  const confFile = path.join(runDir, 'standalone.conf');
  const logFile = path.join(runDir, 'pulsar.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(
    path.join(home, 'bin', 'pulsar'),
    [
      'standalone',
      '--no-functions-worker',
      '--no-stream-storage',
      '--advertised-address',
      '127.0.0.1',
      ...(wipe ? ['--wipe-data'] : []),
      '--bookkeeper-dir',
      path.join(runDir, 'bookkeeper'),
      '--metadata-dir',
      path.join(runDir, 'metadata'),
    ],
    {
      detached: true,
      stdio: ['ignore', out, out],
      env: {
        ...process.env,
        PULSAR_STANDALONE_CONF: confFile,
        PULSAR_LOG_DIR: path.join(runDir, 'logs'),
        PULSAR_MEM: process.env.PULSAR_MEM ?? '-Xms256m -Xmx768m -XX:MaxDirectMemorySize=512m',
        PULSAR_GC: process.env.PULSAR_GC ?? '-XX:+UseG1GC -XX:ParallelGCThreads=2 -XX:ConcGCThreads=1',
      },
    },
  );
  fs.closeSync(out);
  child.unref();
  return { pid: child.pid, logFile };
}

/**
 * Starts a fresh standalone broker and waits until it is ready. Returns its state record. With
 * `{ reuse: state }` it starts again on the data of a stopped broker (see restartBroker).
 */
export async function startBroker(settings = brokerSettings(), { reuse } = {}) {
  const existing = reuse ? null : readState(settings);
  if (existing && !isOurBroker(existing.pid)) {
    // Left behind by a run that was killed: its process is gone, so only its data remains.
    fs.rmSync(existing.runDir, { recursive: true, force: true });
    fs.rmSync(settings.stateFile, { force: true });
  } else if (existing) {
    throw new Error(
      `a broker started by this script is already running (pid ${existing.pid}); run "npm run pulsar:down"`,
    );
  }
  for (const port of [settings.webPort, settings.brokerPort]) {
    if (!(await portFree(port))) throw new Error(`port ${port} on 127.0.0.1 is in use; stop what holds it first`);
  }
  const home = ensureDistribution(settings);
  const runDir = reuse?.runDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'bq-pulsar-'));
  writeStandaloneConf(home, runDir, [
    `bindAddress=127.0.0.1`,
    `advertisedAddress=127.0.0.1`,
    `brokerServicePort=${settings.brokerPort}`,
    `webServicePort=${settings.webPort}`,
  ]);
  const { pid, logFile } = spawnStandalone(home, runDir, { wipe: !reuse });
  const state = { pid, runDir, logFile, webUrl: settings.webUrl, serviceUrl: settings.serviceUrl };
  fs.mkdirSync(path.dirname(settings.stateFile), { recursive: true });
  fs.writeFileSync(settings.stateFile, JSON.stringify(state, null, 2));
  log(`starting Pulsar ${PULSAR_VERSION} (pid ${pid}, data in ${runDir}); this can take a minute`);
  const started = Date.now();
  try {
    await waitUntilReady(settings, pid, logFile);
  } catch (error) {
    await stopBroker(settings);
    throw error;
  }
  log(`ready at ${settings.webUrl} and ${settings.serviceUrl} after ${Math.round((Date.now() - started) / 1000)} s`);
  return state;
}

/** Stops the broker this script started (by its pid) and removes its data. No-op when none is recorded. */
export async function stopBroker(settings = brokerSettings()) {
  const state = readState(settings);
  if (!state) return false;
  if (isOurBroker(state.pid)) {
    // bin/pulsar execs java, so the recorded pid is the JVM; SIGTERM runs its shutdown hooks.
    process.kill(state.pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (isAlive(state.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    if (isAlive(state.pid)) process.kill(state.pid, 'SIGKILL');
  }
  fs.rmSync(state.runDir, { recursive: true, force: true });
  fs.rmSync(settings.stateFile, { force: true });
  log(`stopped broker pid ${state.pid}`);
  return true;
}

/**
 * Makes a broker available for tests: the one named by PULSAR_WEB_URL, else one already answering on
 * the default port, else a fresh one started here. Returns whether this call started it.
 */
export async function ensureBroker(env = process.env) {
  const settings = brokerSettings(env);
  if (env.PULSAR_WEB_URL) {
    if (!(await brokerAnswers(env.PULSAR_WEB_URL)))
      throw new Error(`PULSAR_WEB_URL=${env.PULSAR_WEB_URL} does not answer`);
    return { started: false, webUrl: env.PULSAR_WEB_URL, serviceUrl: env.PULSAR_SERVICE_URL ?? settings.serviceUrl };
  }
  if (await brokerAnswers(settings.webUrl))
    return { started: false, webUrl: settings.webUrl, serviceUrl: settings.serviceUrl };
  await startBroker(settings);
  return { started: true, webUrl: settings.webUrl, serviceUrl: settings.serviceUrl };
}

/**
 * Stops the broker this script started — SIGKILL with `{ kill: true }`, as a crash would — and starts it
 * again on the same data and ports, so stored messages and subscriptions survive. For chaos tests on a
 * broker of their own; never point it at a shared one.
 */
export async function restartBroker(settings = brokerSettings(), { kill = false, downMs = 0 } = {}) {
  const state = readState(settings);
  if (!state) throw new Error(`no broker started by this script is recorded for ${settings.webUrl}`);
  if (isOurBroker(state.pid)) {
    process.kill(state.pid, kill ? 'SIGKILL' : 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (isAlive(state.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(state.pid)) process.kill(state.pid, 'SIGKILL');
  }
  while (!(await portFree(settings.webPort)) || !(await portFree(settings.brokerPort))) {
    await new Promise((r) => setTimeout(r, 200));
  }
  // An outage longer than the restart alone: clients' time-outs and reconnect back-off come into play.
  if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
  log(`restarting the broker on the data in ${state.runDir}`);
  return startBroker(settings, { reuse: state });
}
