// A second Pulsar standalone broker with token authentication, authorization and TLS, on its own ports and data
// directory, for the security suites. Every secret (token key, tokens, CA and server key) is generated at start-up
// into the run directory and removed with it; nothing secret is committed or logged.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import {
  brokerSettings,
  ensureDistribution,
  isOurBroker,
  portFree,
  spawnStandalone,
  tail,
  writeStandaloneConf,
} from './broker.mjs';

/**
 * The roles the profile knows. `admin` (the admin steps) and `websocket` are super-users; the others get namespace
 * permissions. `websocket` is the broker's own client role, and a proxy role: the in-process WebSocket service
 * authenticates and authorizes each client itself, then connects as this role with a placeholder original
 * principal, which Pulsar 4.0.6 accepts only from a proxy role (4.0.7 also lets a plain super-user do it).
 */
export const ROLES = { admin: 'bq-admin', websocket: 'bq-websocket', app: 'bq-app', limited: 'bq-limited' };
/** public/default permissions per role, granted through the admin API once the broker is up. */
const GRANTS = { [ROLES.app]: ['produce', 'consume'], [ROLES.limited]: ['consume'] };

const log = (message) => process.stderr.write(`[pulsar-secured] ${message}\n`);

export function securedSettings(env = process.env) {
  const base = brokerSettings(env);
  const port = (name, fallback) => Number(env[name] ?? fallback);
  const ports = {
    broker: port('PULSAR_SECURED_BROKER_PORT', 6651),
    brokerTls: port('PULSAR_SECURED_BROKER_TLS_PORT', 6652),
    web: port('PULSAR_SECURED_WEB_PORT', 8081),
    webTls: port('PULSAR_SECURED_WEB_TLS_PORT', 8444),
  };
  return {
    ports,
    cacheDir: base.cacheDir,
    stateFile: path.join(base.cacheDir, 'state', `secured-broker-${ports.webTls}.json`),
    lockDir: path.join(base.cacheDir, 'state', `secured-broker-${ports.webTls}.lock`),
    readyTimeoutMs: base.readyTimeoutMs,
  };
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) throw new Error(`cannot run ${command}: ${result.error.message}`);
  if (result.status !== 0) {
    // stderr of openssl / bin/pulsar names files, never the secrets they hold.
    throw new Error(`${path.basename(command)} ${args[0]} failed (exit ${result.status}): ${result.stderr.trim()}`);
  }
  return result.stdout;
}

/** A CA and a server certificate for 127.0.0.1 and localhost, and a second CA the broker does not use. */
function makeCertificates(dir) {
  const openssl = (...args) => run('openssl', args, { cwd: dir });
  const makeCa = (name, subject) =>
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${subject}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout',
      `${name}.key.pem`,
      '-out',
      `${name}.cert.pem`,
    );
  makeCa('ca', 'babelqueue test CA');
  makeCa('other-ca', 'babelqueue untrusted CA');
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key.pem',
    '-out',
    'server.csr.pem',
  );
  fs.writeFileSync(
    path.join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr.pem',
    '-CA',
    'ca.cert.pem',
    '-CAkey',
    'ca.key.pem',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'server.ext',
    '-out',
    'server.cert.pem',
  );
  // The broker reads PKCS#8 keys only.
  openssl('pkcs8', '-topk8', '-nocrypt', '-in', 'server.key.pem', '-out', 'server.key-pk8.pem');
}

/** Runs `bin/pulsar tokens …` (a small JVM) and resolves to its stdout. */
function pulsarTokens(home, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(home, 'bin', 'pulsar'), ['tokens', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PULSAR_MEM: '-Xms32m -Xmx128m', PULSAR_GC: '-XX:+UseSerialGC' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve(out.trim())
        : reject(new Error(`bin/pulsar tokens ${args[0]} failed (exit ${code}): ${err}`)),
    );
  });
}

/**
 * The token key, a second key the broker does not know, and the tokens: one per role, one that expired at once,
 * one signed with the wrong key. Token files hold the bare JWT.
 */
async function makeTokens(home, dir) {
  const keyFile = path.join(dir, 'secret.key');
  const otherKeyFile = path.join(dir, 'other-secret.key');
  await Promise.all([
    pulsarTokens(home, ['create-secret-key', '--output', keyFile]),
    pulsarTokens(home, ['create-secret-key', '--output', otherKeyFile]),
  ]);
  const create = (key, subject, extra = []) =>
    pulsarTokens(home, ['create', '--secret-key', `file://${key}`, '--subject', subject, ...extra]);
  const tokens = {
    admin: create(keyFile, ROLES.admin),
    websocket: create(keyFile, ROLES.websocket),
    app: create(keyFile, ROLES.app),
    limited: create(keyFile, ROLES.limited),
    expired: create(keyFile, ROLES.app, ['--expiry-time', '1s']),
    forged: create(otherKeyFile, ROLES.app),
    // A second valid token of the app role, for rotation.
    rotated: create(keyFile, ROLES.app, ['--expiry-time', '1d']),
  };
  const files = {};
  for (const [name, pending] of Object.entries(tokens)) {
    files[name] = path.join(dir, `${name}.token`);
    fs.writeFileSync(files[name], `${await pending}\n`, { mode: 0o600 });
  }
  return { keyFile, otherKeyFile, tokens: files };
}

/** An HTTPS request to the admin API as the super-user. Resolves to `{ status, body }`. */
export function adminRequest(state, method, apiPath, body) {
  const token = fs.readFileSync(state.tokens.admin, 'utf8').trim();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${state.webUrlTls}${apiPath}`,
      {
        method,
        ca: fs.readFileSync(state.caFile),
        timeout: 5000,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(payload !== undefined && { 'Content-Type': 'application/json' }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.once('timeout', () => request.destroy(new Error(`${method} ${apiPath}: no answer within 5 s`)));
    request.once('error', reject);
    request.end(payload);
  });
}

/** Grants `actions` on public/default to `role`. */
export async function grantNamespace(state, role, actions) {
  const response = await adminRequest(
    state,
    'POST',
    `/admin/v2/namespaces/public/default/permissions/${role}`,
    actions,
  );
  if (response.status !== 204)
    throw new Error(`granting ${actions} to ${role}: HTTP ${response.status} ${response.body}`);
}

/** One message over wss:// as the app role, read back: proves TLS, token authentication and the grants. */
async function roundTrip(state) {
  const token = fs.readFileSync(state.tokens.app, 'utf8').trim();
  const options = { ca: fs.readFileSync(state.caFile), headers: { Authorization: `Bearer ${token}` } };
  const wsBase = state.webUrlTls.replace(/^https/, 'wss');
  const topic = `persistent/public/default/bq-secured-ready-${process.pid}-${Date.now()}`;
  const open = (url) =>
    new Promise((resolve, reject) => {
      const socket = new WebSocket(url, options);
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

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const created = (response, what) => {
  // 409: it exists already (a reused data directory, or standalone managed after all).
  if (![200, 204, 409].includes(response.status))
    throw new Error(`creating ${what}: HTTP ${response.status} ${response.body}`);
};

/**
 * Creates the cluster, the tenant `public` and the namespace `public/default` as the admin role. Standalone tries to
 * do it with the broker's own client, whose role is a proxy role here, so the broker refuses it.
 */
async function createNamespace(state) {
  const cluster = {
    serviceUrl: state.webUrl,
    serviceUrlTls: state.webUrlTls,
    brokerServiceUrl: state.serviceUrl,
    brokerServiceUrlTls: state.serviceUrlTls,
  };
  created(await adminRequest(state, 'PUT', '/admin/v2/clusters/standalone', cluster), 'cluster standalone');
  const tenant = { adminRoles: [ROLES.admin], allowedClusters: ['standalone'] };
  created(await adminRequest(state, 'PUT', '/admin/v2/tenants/public', tenant), 'tenant public');
  created(await adminRequest(state, 'PUT', '/admin/v2/namespaces/public/default', {}), 'namespace public/default');
}

async function waitUntilReady(settings, state) {
  const deadline = Date.now() + settings.readyTimeoutMs;
  const started = Date.now();
  let stage = 'cluster';
  let lastReport = 0;
  let lastError = '';
  while (Date.now() < deadline) {
    if (!alive(state.pid))
      throw new Error(`secured Pulsar exited during start-up. Last log lines:\n${tail(state.logFile)}`);
    try {
      if (stage === 'cluster' && (await adminRequest(state, 'GET', '/admin/v2/clusters')).status === 200) {
        stage = 'namespace';
      }
      if (stage === 'namespace') {
        await createNamespace(state);
        stage = 'grants';
      }
      if (stage === 'grants') {
        for (const [role, actions] of Object.entries(GRANTS)) await grantNamespace(state, role, actions);
        stage = 'round trip';
      }
      if (stage === 'round trip' && (await roundTrip(state))) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      log(`waiting for the secured broker (${stage}), ${Math.round((Date.now() - started) / 1000)} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(
    `secured Pulsar was not ready within ${settings.readyTimeoutMs / 1000} s (stuck at: ${stage}; last error: ${lastError}). ` +
      `Last log lines:\n${tail(state.logFile)}`,
  );
}

function readState(settings) {
  try {
    return JSON.parse(fs.readFileSync(settings.stateFile, 'utf8'));
  } catch {
    return null;
  }
}

/** The broker's conf lines: TLS next to the plain ports (the in-process WebSocket service's client uses those). */
function securedConf(settings, secrets) {
  const { ports } = settings;
  return [
    'bindAddress=127.0.0.1',
    'advertisedAddress=127.0.0.1',
    `brokerServicePort=${ports.broker}`,
    `brokerServicePortTls=${ports.brokerTls}`,
    `webServicePort=${ports.web}`,
    `webServicePortTls=${ports.webTls}`,
    `tlsCertificateFilePath=${path.join(secrets, 'server.cert.pem')}`,
    `tlsKeyFilePath=${path.join(secrets, 'server.key-pk8.pem')}`,
    `tlsTrustCertsFilePath=${path.join(secrets, 'ca.cert.pem')}`,
    'tlsAllowInsecureConnection=false',
    'authenticationEnabled=true',
    'authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken',
    `tokenSecretKey=file://${path.join(secrets, 'secret.key')}`,
    'authorizationEnabled=true',
    `superUserRoles=${ROLES.admin},${ROLES.websocket}`,
    `proxyRoles=${ROLES.websocket}`,
    // The broker's own client: the WebSocket service's producers and consumers.
    'brokerClientAuthenticationPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken',
    `brokerClientAuthenticationParameters=file://${path.join(secrets, 'websocket.token')}`,
    `brokerClientTrustCertsFilePath=${path.join(secrets, 'ca.cert.pem')}`,
    // Topic policies live on system topics that the broker reads with its own client; a proxy role without an
    // original principal may not connect, so they are off here.
    'topicLevelPoliciesEnabled=false',
    'systemTopicEnabled=false',
  ];
}

/** Where the tests find the broker: URLs, and the files that hold the CA and the tokens (never the secrets). */
function describe(settings, runDir, secrets, extra) {
  const { ports } = settings;
  return {
    runDir,
    secretsDir: secrets,
    serviceUrl: `pulsar://127.0.0.1:${ports.broker}`,
    serviceUrlTls: `pulsar+ssl://127.0.0.1:${ports.brokerTls}`,
    webUrl: `http://127.0.0.1:${ports.web}`,
    webUrlTls: `https://127.0.0.1:${ports.webTls}`,
    caFile: path.join(secrets, 'ca.cert.pem'),
    otherCaFile: path.join(secrets, 'other-ca.cert.pem'),
    serverKeyFile: path.join(secrets, 'server.key.pem'),
    caKeyFile: path.join(secrets, 'ca.key.pem'),
    ...extra,
  };
}

/** Starts a fresh secured standalone broker and waits until it is ready. Returns its state record. */
export async function startSecuredBroker(settings = securedSettings(), owner = 'pulsar-script') {
  const existing = readState(settings);
  if (existing && isOurBroker(existing.pid)) {
    throw new Error(
      `a secured broker is already running (pid ${existing.pid}); stop it with "npm run pulsar:down -- --secured"`,
    );
  }
  if (existing) {
    fs.rmSync(existing.runDir, { recursive: true, force: true });
    fs.rmSync(settings.stateFile, { force: true });
  }
  for (const port of Object.values(settings.ports)) {
    if (!(await portFree(port))) throw new Error(`port ${port} on 127.0.0.1 is in use; stop what holds it first`);
  }
  const home = ensureDistribution();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-pulsar-secured-'));
  const secrets = path.join(runDir, 'secrets');
  fs.mkdirSync(secrets, { mode: 0o700 });
  log(`generating a CA, a server certificate, a token key and tokens in ${secrets}`);
  makeCertificates(secrets);
  const { keyFile, otherKeyFile, tokens } = await makeTokens(home, secrets);
  writeStandaloneConf(home, runDir, securedConf(settings, secrets));
  const { pid, logFile } = spawnStandalone(home, runDir);
  const state = describe(settings, runDir, secrets, { pid, logFile, owner, keyFile, otherKeyFile, tokens });
  fs.mkdirSync(path.dirname(settings.stateFile), { recursive: true });
  fs.writeFileSync(settings.stateFile, JSON.stringify(state, null, 2));
  log(`starting secured Pulsar (pid ${pid}, data in ${runDir}); this can take a minute`);
  const started = Date.now();
  try {
    await waitUntilReady(settings, state);
  } catch (error) {
    // Keep the log of a failed start-up (it names files, never the secrets they hold).
    const kept = path.join(settings.cacheDir, 'state', 'secured-broker-failed-start.log');
    fs.copyFileSync(logFile, kept);
    await stopSecuredBroker(settings);
    throw new Error(`${error instanceof Error ? error.message : error}\nfull log: ${kept}`, { cause: error });
  }
  log(`ready at ${state.webUrlTls} and ${state.serviceUrlTls} after ${Math.round((Date.now() - started) / 1000)} s`);
  return state;
}

/** Stops the secured broker (by its recorded pid) and removes its data and secrets. `owner`: only if it matches. */
export async function stopSecuredBroker(settings = securedSettings(), owner) {
  const state = readState(settings);
  if (!state || (owner !== undefined && state.owner !== owner)) return false;
  if (isOurBroker(state.pid)) {
    process.kill(state.pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (alive(state.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    if (alive(state.pid)) process.kill(state.pid, 'SIGKILL');
  }
  fs.rmSync(state.runDir, { recursive: true, force: true });
  fs.rmSync(settings.stateFile, { force: true });
  log(`stopped secured broker pid ${state.pid}`);
  return true;
}

async function answers(state) {
  if (!state || !isOurBroker(state.pid) || !fs.existsSync(state.tokens.admin)) return false;
  try {
    return (await adminRequest(state, 'GET', '/admin/v2/clusters')).status === 200;
  } catch {
    return false;
  }
}

/** Serialises start-ups across Jest workers: only one process starts the broker, the others wait for it. */
async function withLock(settings, action) {
  fs.mkdirSync(path.dirname(settings.lockDir), { recursive: true });
  const deadline = Date.now() + settings.readyTimeoutMs + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(settings.lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = Date.now() - fs.statSync(settings.lockDir, { throwIfNoEntry: false })?.mtimeMs;
      if (age > settings.readyTimeoutMs + 60_000) fs.rmSync(settings.lockDir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${settings.lockDir}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await action();
  } finally {
    fs.rmSync(settings.lockDir, { recursive: true, force: true });
  }
}

/**
 * The secured broker for a test run: the recorded one when it answers, else a fresh one owned by `owner` (the run
 * that stops it at the end).
 */
export async function ensureSecuredBroker(owner, env = process.env) {
  const settings = securedSettings(env);
  return withLock(settings, async () => {
    const state = readState(settings);
    if (await answers(state)) return state;
    return startSecuredBroker(settings, owner);
  });
}
