// A real multi-broker Pulsar cluster on 127.0.0.1, from the same Maven distribution as the standalone broker:
// ZooKeeper (the metadata store), one bookie and two brokers, each with its WebSocket service. Its ports clash with
// neither the shared standalone (6650/8080), the chaos broker (16650/18080) nor the secured broker. The cluster
// fault scenarios (test/chaos/cluster-*.test.ts) kill and restart its brokers; nothing else uses it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { brokerSettings, ensureDistribution, fetchText, isAlive, portFree, tail } from './broker.mjs';

export const CLUSTER_NAME = 'bq-cluster';
const log = (message) => process.stderr.write(`[pulsar-cluster] ${message}\n`);

export function clusterSettings(env = process.env) {
  const base = brokerSettings(env);
  const port = (name, fallback) => Number(env[name] ?? fallback);
  const zookeeperPort = port('PULSAR_CLUSTER_ZK_PORT', 12181);
  const bookiePort = port('PULSAR_CLUSTER_BOOKIE_PORT', 13181);
  const brokers = [
    {
      name: 'broker-1',
      brokerPort: port('PULSAR_CLUSTER_BROKER1_PORT', 16660),
      webPort: port('PULSAR_CLUSTER_WEB1_PORT', 18090),
    },
    {
      name: 'broker-2',
      brokerPort: port('PULSAR_CLUSTER_BROKER2_PORT', 16661),
      webPort: port('PULSAR_CLUSTER_WEB2_PORT', 18091),
    },
  ].map((broker) => ({
    ...broker,
    webUrl: `http://127.0.0.1:${broker.webPort}`,
    serviceUrl: `pulsar://127.0.0.1:${broker.brokerPort}`,
    // How the brokers name each other in the admin API and in topic lookups.
    id: `127.0.0.1:${broker.webPort}`,
  }));
  return {
    zookeeperPort,
    bookiePort,
    brokers,
    cacheDir: base.cacheDir,
    stateFile: path.join(base.cacheDir, 'state', `cluster-${zookeeperPort}.json`),
    lockDir: path.join(base.cacheDir, 'state', `cluster-${zookeeperPort}.lock`),
    readyTimeoutMs: base.readyTimeoutMs,
    /** Both brokers, as the native client takes them. */
    serviceUrl: `pulsar://${brokers.map((b) => `127.0.0.1:${b.brokerPort}`).join(',')}`,
    /** Both web services, as the WebSocket client takes them. */
    webUrl: `http://${brokers.map((b) => `127.0.0.1:${b.webPort}`).join(',')}`,
  };
}

/**
 * Small JVMs: the cluster is four of them on a 2-core machine next to other brokers. Serial GC and the C1 compiler
 * only start faster and use fewer threads; the scenarios move hundreds of messages, not millions.
 */
const JVM = {
  zookeeper: '-Xms32m -Xmx128m',
  bookie: '-Xms64m -Xmx256m -XX:MaxDirectMemorySize=256m',
  broker: '-Xms128m -Xmx384m -XX:MaxDirectMemorySize=256m',
};
const GC = '-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1';

function readState(settings) {
  try {
    return JSON.parse(fs.readFileSync(settings.stateFile, 'utf8'));
  } catch {
    return null;
  }
}

function writeState(settings, state) {
  fs.mkdirSync(path.dirname(settings.stateFile), { recursive: true });
  fs.writeFileSync(settings.stateFile, JSON.stringify(state, null, 2));
}

/** True when `pid` is a live JVM of this cluster (its command line names the cluster's run directory). */
function isClusterProcess(pid, runDir) {
  if (!pid || !isAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(runDir);
  } catch {
    return true; // no /proc: trust the pid
  }
}

/**
 * The shipped conf file with each of `lines` (key=value) in place of the shipped line of its key, or appended. In
 * place, not only appended: the bookie reads its conf with Commons Configuration, for which a repeated key is a list
 * whose first value wins.
 */
function writeConf(home, shipped, target, lines) {
  const overrides = new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line]));
  const kept = fs
    .readFileSync(path.join(home, 'conf', shipped), 'utf8')
    .split('\n')
    .map((line) => {
      const key = /^\s*([^#=\s]+)\s*=/.exec(line)?.[1];
      if (key === undefined || !overrides.has(key)) return line;
      const replaced = overrides.get(key);
      overrides.delete(key);
      return replaced;
    });
  fs.writeFileSync(target, `${kept.join('\n')}\n# bq cluster overrides\n${[...overrides.values()].join('\n')}\n`);
}

function writeConfs(home, settings, runDir) {
  const zk = `127.0.0.1:${settings.zookeeperPort}`;
  writeConf(home, 'zookeeper.conf', path.join(runDir, 'zookeeper.conf'), [
    // A short tick allows a short broker session: a killed broker's topics move after its session expires.
    'tickTime=1000',
    `dataDir=${path.join(runDir, 'zookeeper')}`,
    `clientPort=${settings.zookeeperPort}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    'forceSync=no',
    'metricsProvider.className=org.apache.zookeeper.metrics.impl.NullMetricsProvider',
  ]);
  writeConf(home, 'bookkeeper.conf', path.join(runDir, 'bookkeeper.conf'), [
    `bookiePort=${settings.bookiePort}`,
    'advertisedAddress=127.0.0.1',
    'allowLoopback=true',
    `zkServers=${zk}`,
    `journalDirectory=${path.join(runDir, 'bookie', 'journal')}`,
    `ledgerDirectories=${path.join(runDir, 'bookie', 'ledgers')}`,
    'statsProviderClass=org.apache.bookkeeper.stats.NullStatsProvider',
    'httpServerEnabled=false',
    'journalSyncData=false',
    'journalMaxGroupWaitMSec=1',
    'dbStorage_writeCacheMaxSizeMb=16',
    'dbStorage_readAheadCacheMaxSizeMb=16',
    'dbStorage_rocksDB_blockCacheSize=16777216',
    'diskUsageThreshold=0.99',
    'diskUsageWarnThreshold=0.99',
  ]);
  for (const broker of settings.brokers) {
    writeConf(home, 'broker.conf', path.join(runDir, `${broker.name}.conf`), [
      `clusterName=${CLUSTER_NAME}`,
      `metadataStoreUrl=zk:${zk}`,
      `configurationMetadataStoreUrl=zk:${zk}`,
      // A killed broker's ownership lasts until its metadata session expires; the default 30 s is a long outage.
      'metadataStoreSessionTimeoutMillis=5000',
      'bindAddress=127.0.0.1',
      'advertisedAddress=127.0.0.1',
      `brokerServicePort=${broker.brokerPort}`,
      `webServicePort=${broker.webPort}`,
      'webSocketServiceEnabled=true',
      'functionsWorkerEnabled=false',
      'managedLedgerDefaultEnsembleSize=1',
      'managedLedgerDefaultWriteQuorum=1',
      'managedLedgerDefaultAckQuorum=1',
      'managedLedgerCacheSizeMB=32',
      // The scenarios move topics themselves (unload, split, kill); the load balancer moving them too would make
      // the runs differ from one another.
      'loadBalancerSheddingEnabled=false',
      'loadBalancerAutoBundleSplitEnabled=false',
      'loadBalancerAutoUnloadSplitBundlesEnabled=false',
      'brokerDeleteInactiveTopicsEnabled=false',
      'allowAutoTopicCreation=true',
      'allowAutoTopicCreationType=non-partitioned',
      'transactionCoordinatorEnabled=false',
      'subscriptionRedeliveryTrackerEnabled=true',
      'delayedDeliveryEnabled=true',
      'delayedDeliveryTickTimeMillis=100',
      'isDelayedDeliveryDeliverAtTimeStrict=true',
      // A rolling restart stops a broker gracefully; it must not wait the default minute for its clients.
      'brokerShutdownTimeoutMs=5000',
    ]);
  }
}

/** Starts one `bin/pulsar <command>` JVM detached; returns its pid (bin/pulsar execs java). */
function spawnService(home, runDir, name, command, env) {
  const out = fs.openSync(path.join(runDir, `${name}.log`), 'a');
  const child = spawn(path.join(home, 'bin', 'pulsar'), command, {
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      PULSAR_LOG_DIR: path.join(runDir, 'logs', name),
      PULSAR_GC: GC,
      BOOKIE_GC: GC,
      PULSAR_GC_LOG: ' ',
      BOOKIE_GC_LOG: ' ',
      ...env,
    },
  });
  fs.closeSync(out);
  child.unref();
  return child.pid;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, check, { timeoutMs, pid, logFile }) {
  const deadline = Date.now() + timeoutMs;
  const started = Date.now();
  let lastReport = Date.now();
  while (Date.now() < deadline) {
    if (pid && !isAlive(pid)) throw new Error(`${what} exited during start-up. Last log lines:\n${tail(logFile)}`);
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      log(`waiting for ${what}, ${Math.round((Date.now() - started) / 1000)} s`);
    }
    await sleep(300);
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000} s. Last log lines:\n${tail(logFile)}`);
}

function portAnswers(port) {
  return portFree(port).then((free) => !free);
}

/** One message through a broker's WebSocket service and back: proves broker, bookie and WebSocket service. */
async function roundTrip(webUrl) {
  const wsBase = webUrl.replace(/^http/, 'ws');
  const topic = `persistent/public/default/bq-cluster-ready-${process.pid}-${Date.now()}`;
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
      setTimeout(() => reject(new Error('no message within 20 s')), 20_000).unref();
    });
    const producer = await open(`${wsBase}/ws/v2/producer/${topic}`);
    try {
      producer.send(JSON.stringify({ payload: Buffer.from('ready').toString('base64') }));
      return Buffer.from((await received).payload, 'base64').toString() === 'ready';
    } finally {
      producer.close();
    }
  } finally {
    consumer.close();
  }
}

function startBrokerProcess(home, state, broker) {
  const pid = spawnService(home, state.runDir, broker.name, ['broker'], {
    PULSAR_BROKER_CONF: path.join(state.runDir, `${broker.name}.conf`),
    PULSAR_MEM: process.env.PULSAR_CLUSTER_BROKER_MEM ?? JVM.broker,
  });
  state.pids[broker.name] = pid;
  return pid;
}

async function waitForBroker(settings, state, broker) {
  await waitFor(`${broker.name} (${broker.webUrl})`, () => roundTrip(broker.webUrl), {
    timeoutMs: settings.readyTimeoutMs,
    pid: state.pids[broker.name],
    logFile: path.join(state.runDir, `${broker.name}.log`),
  });
}

/** Starts ZooKeeper, initialises the cluster metadata, starts the bookie and both brokers; waits until all serve. */
export async function startCluster(settings = clusterSettings(), owner = 'pulsar-script') {
  const existing = readState(settings);
  if (existing && Object.values(existing.pids).some((pid) => isClusterProcess(pid, existing.runDir))) {
    throw new Error(
      'a cluster started by this script is already running; stop it with "npm run pulsar:down -- --cluster"',
    );
  }
  if (existing) {
    fs.rmSync(existing.runDir, { recursive: true, force: true });
    fs.rmSync(settings.stateFile, { force: true });
  }
  const ports = [
    settings.zookeeperPort,
    settings.bookiePort,
    ...settings.brokers.flatMap((b) => [b.webPort, b.brokerPort]),
  ];
  for (const port of ports) {
    if (!(await portFree(port))) throw new Error(`port ${port} on 127.0.0.1 is in use; stop what holds it first`);
  }
  const home = ensureDistribution();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-pulsar-cluster-'));
  writeConfs(home, settings, runDir);
  const state = { runDir, owner, pids: {}, webUrl: settings.webUrl, serviceUrl: settings.serviceUrl };
  const started = Date.now();
  try {
    log(`starting ZooKeeper on ${settings.zookeeperPort} (data in ${runDir})`);
    state.pids.zookeeper = spawnService(home, runDir, 'zookeeper', ['zookeeper'], {
      PULSAR_ZK_CONF: path.join(runDir, 'zookeeper.conf'),
      PULSAR_MEM: JVM.zookeeper,
    });
    writeState(settings, state);
    await waitFor('ZooKeeper', () => portAnswers(settings.zookeeperPort), {
      timeoutMs: settings.readyTimeoutMs,
      pid: state.pids.zookeeper,
      logFile: path.join(runDir, 'zookeeper.log'),
    });
    log('initialising the cluster metadata');
    const zk = `zk:127.0.0.1:${settings.zookeeperPort}`;
    const init = spawnSync(
      path.join(home, 'bin', 'pulsar'),
      [
        'initialize-cluster-metadata',
        '--cluster',
        CLUSTER_NAME,
        '--metadata-store',
        zk,
        '--configuration-metadata-store',
        zk,
        '--web-service-url',
        settings.webUrl,
        '--broker-service-url',
        settings.serviceUrl,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, PULSAR_MEM: '-Xms32m -Xmx128m', PULSAR_GC: GC, PULSAR_GC_LOG: ' ' },
      },
    );
    if (init.status !== 0) {
      throw new Error(
        `initialize-cluster-metadata failed (exit ${init.status}):\n${(init.stdout + init.stderr).slice(-3000)}`,
      );
    }
    log(`starting the bookie on ${settings.bookiePort} and ${settings.brokers.length} brokers`);
    state.pids.bookie = spawnService(home, runDir, 'bookie', ['bookie'], {
      PULSAR_BOOKKEEPER_CONF: path.join(runDir, 'bookkeeper.conf'),
      BOOKIE_MEM: JVM.bookie,
    });
    for (const broker of settings.brokers) startBrokerProcess(home, state, broker);
    writeState(settings, state);
    await Promise.all(settings.brokers.map((broker) => waitForBroker(settings, state, broker)));
  } catch (error) {
    const kept = path.join(settings.cacheDir, 'state', 'cluster-failed-start.log');
    const logs = ['zookeeper', 'bookie', ...settings.brokers.map((b) => b.name)]
      .map((name) => `=== ${name}\n${tail(path.join(runDir, `${name}.log`), 80)}`)
      .join('\n');
    fs.writeFileSync(kept, logs);
    await stopCluster(settings);
    throw new Error(`${error instanceof Error ? error.message : error}\nlogs: ${kept}`, { cause: error });
  }
  log(`ready: ${settings.webUrl} and ${settings.serviceUrl} after ${Math.round((Date.now() - started) / 1000)} s`);
  return { ...state, settings };
}

async function stopProcess(pid, runDir, signal = 'SIGTERM') {
  if (!isClusterProcess(pid, runDir)) return;
  process.kill(pid, signal);
  const deadline = Date.now() + 30_000;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

/** Stops every process of the cluster (brokers first) and removes its data. `owner`: only if it matches. */
export async function stopCluster(settings = clusterSettings(), owner) {
  const state = readState(settings);
  if (!state || (owner !== undefined && state.owner !== owner)) return false;
  await Promise.all(settings.brokers.map((b) => stopProcess(state.pids[b.name], state.runDir)));
  await stopProcess(state.pids.bookie, state.runDir);
  await stopProcess(state.pids.zookeeper, state.runDir);
  fs.rmSync(state.runDir, { recursive: true, force: true });
  fs.rmSync(settings.stateFile, { force: true });
  log('stopped the cluster');
  return true;
}

function brokerNamed(settings, name) {
  const broker = settings.brokers.find((b) => b.name === name || b.id === name);
  if (!broker) throw new Error(`no broker ${name} in the cluster (known: ${settings.brokers.map((b) => b.name)})`);
  return broker;
}

/** Kills one broker with SIGKILL (as a crash would) and leaves it down. */
export async function killBroker(name, settings = clusterSettings()) {
  const state = readState(settings);
  if (!state) throw new Error('no cluster is recorded');
  const broker = brokerNamed(settings, name);
  await stopProcess(state.pids[broker.name], state.runDir, 'SIGKILL');
  while (!(await portFree(broker.webPort)) || !(await portFree(broker.brokerPort))) await sleep(100);
}

/**
 * Stops one broker (SIGTERM, a graceful shutdown that hands its topics over; SIGKILL with `{ kill: true }`) unless
 * it is down already, starts it again and waits until it serves.
 */
export async function restartClusterBroker(name, settings = clusterSettings(), { kill = false } = {}) {
  const state = readState(settings);
  if (!state) throw new Error('no cluster is recorded');
  const broker = brokerNamed(settings, name);
  await stopProcess(state.pids[broker.name], state.runDir, kill ? 'SIGKILL' : 'SIGTERM');
  while (!(await portFree(broker.webPort)) || !(await portFree(broker.brokerPort))) await sleep(100);
  startBrokerProcess(ensureDistribution(), state, broker);
  writeState(settings, state);
  await waitForBroker(settings, state, broker);
}

/** The broker (`127.0.0.1:<web port>`) that owns `topic` now, asked of any broker that answers. */
export async function topicOwner(topic, settings = clusterSettings()) {
  const name = topic.replace(/^persistent:\/\//, '');
  for (const broker of settings.brokers) {
    const answer = await fetchText(`${broker.webUrl}/lookup/v2/topic/persistent/${name}`, 5000);
    if (answer?.status === 200) {
      const { httpUrl } = JSON.parse(answer.body);
      return brokerNamed(settings, new URL(httpUrl).host);
    }
  }
  return null;
}

/** True when every broker of the recorded cluster answers its admin API. */
export async function clusterAnswers(settings = clusterSettings()) {
  const state = readState(settings);
  if (!state) return false;
  for (const broker of settings.brokers) {
    const answer = await fetchText(`${broker.webUrl}/admin/v2/brokers/${CLUSTER_NAME}`);
    if (answer?.status !== 200) return false;
  }
  return true;
}

/** Serialises start-ups across processes: only one starts the cluster, the others wait for it. */
async function withLock(settings, action) {
  fs.mkdirSync(path.dirname(settings.lockDir), { recursive: true });
  const stale = settings.readyTimeoutMs + 60_000;
  const deadline = Date.now() + stale;
  for (;;) {
    try {
      fs.mkdirSync(settings.lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = Date.now() - (fs.statSync(settings.lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > stale) fs.rmSync(settings.lockDir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${settings.lockDir}`, { cause: error });
      await sleep(500);
    }
  }
  try {
    return await action();
  } finally {
    fs.rmSync(settings.lockDir, { recursive: true, force: true });
  }
}

/** The cluster for a test run: the recorded one when it answers, else a fresh one owned by `owner`. */
export async function ensureCluster(owner, env = process.env) {
  const settings = clusterSettings(env);
  return withLock(settings, async () => {
    if (await clusterAnswers(settings)) return { ...readState(settings), settings, started: false };
    return { ...(await startCluster(settings, owner)), started: true };
  });
}
