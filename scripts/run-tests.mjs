#!/usr/bin/env node
// npm test entry: runs the Jest projects named on the command line (default: all that have tests) and ends
// with the plain summary line "N passed, N failed" counted from Jest's JSON results.
//
// The broker suites (integration, interop) run once per Pulsar client: the built-in WebSocket client and the
// native pulsar-client (built from source once when it cannot be downloaded, see scripts/lib/native-client.mjs).
// BQ_TEST_CLIENTS=websocket (or native) runs one; BQ_SKIP_NATIVE=1 skips the native runs with a banner, except
// under CI, where the native runs are required.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokerAnswers, brokerSettings, ensureBroker, stopBroker } from './lib/broker.mjs';
import { chaosEnv } from '../test/chaos/support/global-setup.mjs';
import { ensureNativeClient } from './lib/native-client.mjs';
import { ensurePostgres, stopPostgres } from './lib/postgres.mjs';
import { stopSecuredBroker } from './lib/secured-broker.mjs';
import { stopCluster } from './lib/cluster.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const all = ['unit', 'conformance', 'integration', 'chaos', 'interop'];
const brokerProjects = new Set(['integration', 'chaos', 'interop']);
/** Suites about the WebSocket client itself (or that need its TCP-proxy path): they run once, on it. */
const webSocketOnly = ['/test/integration/websocket/', '/test/chaos/network.test.ts'];
/** The suite the native client also runs with a single libuv pool thread. */
const poolOfOneTest = 'test/integration/module/real-service.test.ts';
/** Projects whose files share one broker they kill and restart: their files run one at a time. */
const serialProjects = new Set(['chaos']);

const separator = process.argv.indexOf('--');
const named = process.argv.slice(2, separator === -1 ? undefined : separator);
const passThrough = separator === -1 ? [] : process.argv.slice(separator + 1);

const hasTests = (dir) =>
  fs.existsSync(dir) && fs.readdirSync(dir, { recursive: true }).some((file) => String(file).endsWith('.test.ts'));
const projects = (named.length ? named : all).filter((name) => {
  if (!all.includes(name)) throw new Error(`unknown test project "${name}" (known: ${all.join(', ')})`);
  return hasTests(path.join(root, 'test', name));
});
if (projects.length === 0) {
  console.error('no test files found for the selected projects');
  process.exit(1);
}
const banner = (lines) =>
  console.log(['', '='.repeat(100), ...lines.map((l) => `  ${l}`), '='.repeat(100), ''].join('\n'));

/** The failed tests (and suites that failed to load) of one Jest JSON result, by file and name: the log's tail names them. */
function failedNames(results) {
  return results.testResults.flatMap((suite) => {
    const file = path.relative(root, suite.name);
    const tests = suite.assertionResults.filter((test) => test.status === 'failed');
    if (tests.length === 0 && suite.status === 'failed')
      return [
        `${file} (the suite: ${
          String(suite.message)
            .split('\n')
            .find((line) => line.trim()) ?? 'failed'
        })`,
      ];
    return tests.map((test) => `${file} › ${test.fullName}`);
  });
}

let passed = 0;
let failed = 0;

// A full run (no project named) also checks types, lint and formatting; each failing check counts as a failure.
const staticChecks = named.length
  ? []
  : [
      ['typecheck', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']],
      ['lint', ['node_modules/eslint/bin/eslint.js', '.']],
      ['format', ['node_modules/prettier/bin/prettier.cjs', '--check', '.']],
    ];
for (const [name, args] of staticChecks) {
  const check = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (check.status === 0) passed += 1;
  else failed += 1;
  console.log(`[${name}] ${check.status === 0 ? 'ok' : 'FAILED'}`);
}

const needsBroker = projects.some((name) => brokerProjects.has(name));
const clients = (process.env.BQ_TEST_CLIENTS ?? 'websocket,native').split(',').map((c) => c.trim());
for (const client of clients) {
  if (client !== 'websocket' && client !== 'native') throw new Error(`BQ_TEST_CLIENTS: unknown client "${client}"`);
}
let runNative = needsBroker && clients.includes('native');
if (runNative && process.env.BQ_SKIP_NATIVE === '1') {
  if (process.env.CI) {
    console.error('[native] BQ_SKIP_NATIVE=1 is ignored under CI: the native runs are required');
  } else {
    banner([
      'BQ_SKIP_NATIVE=1: the broker suites run on the WebSocket client ONLY.',
      'The native client is not tested.',
    ]);
    runNative = false;
  }
}
if (runNative) {
  try {
    const { source, seconds } = ensureNativeClient();
    console.log(`[native] pulsar-client ready (${source}, ${seconds.toFixed(1)} s)`);
  } catch (error) {
    banner([
      'The native pulsar-client could not be made loadable, so its runs FAIL.',
      String(error instanceof Error ? error.message : error),
      'Locally, BQ_SKIP_NATIVE=1 skips the native runs (not under CI).',
    ]);
    failed += 1;
    runNative = false;
  }
}

// One broker for every run: reuse one that answers, or start one and stop it at the end.
let broker = null;
if (needsBroker) {
  broker = await ensureBroker();
  process.env.PULSAR_WEB_URL = broker.webUrl;
  process.env.PULSAR_SERVICE_URL = broker.serviceUrl;
}

// The outbox suites (integration), the inbox's cross-language suite (interop) and its chaos proof write to a real
// PostgreSQL: one cluster for every run, stopped at the end.
let postgres = null;
if (['integration', 'interop', 'chaos'].some((project) => projects.includes(project))) {
  postgres = await ensurePostgres();
  process.env.BQ_PG_URL = postgres.url;
}

// The security suites start the secured broker on first use; it serves every run and is stopped at the end.
const securedOwner = `run-tests-${process.pid}`;
process.env.BQ_SECURED_OWNER = securedOwner;
process.env.BQ_SECURED_DEFER_STOP = '1';
// Likewise the cluster of the cluster fault scenarios: started on first use, it serves both clients' runs.
const clusterOwner = `run-tests-${process.pid}`;
process.env.BQ_CLUSTER_OWNER = clusterOwner;
process.env.BQ_CLUSTER_DEFER_STOP = '1';

/** The Jest runs: per client, the parallel projects in one run and each serial project in a run of its own. */
const runs = [];
const addRuns = (client, selected, ignore) => {
  const parallel = selected.filter((name) => !serialProjects.has(name));
  if (parallel.length) runs.push({ client, projects: parallel, ignore });
  for (const name of selected.filter((n) => serialProjects.has(n))) {
    runs.push({ client, projects: [name], ignore, serial: true });
  }
};
if (clients.includes('websocket') || !needsBroker) addRuns('websocket', projects, []);
else
  addRuns(
    'websocket',
    projects.filter((name) => !brokerProjects.has(name)),
    [],
  );
if (runNative)
  addRuns(
    'native',
    projects.filter((name) => brokerProjects.has(name)),
    webSocketOnly,
  );
// The service-shaped app once more on the native client with a single libuv pool thread: anything in the library that
// held a pool thread while waiting would stall it (a full run only; a named file runs as asked).
if (runNative && projects.includes('integration') && passThrough.length === 0)
  runs.push({
    client: 'native',
    projects: ['integration'],
    paths: [poolOfOneTest],
    env: { UV_THREADPOOL_SIZE: '1' },
    label: 'UV_THREADPOOL_SIZE=1',
  });

// The chaos suites start a broker of their own; one started for the first client's run serves the second.
const chaosRuns = runs.filter((run) => run.projects.includes('chaos')).length;
const chaosOwned = chaosRuns > 1 && !(await brokerAnswers(brokerSettings(chaosEnv()).webUrl));
if (chaosOwned) process.env.BQ_CHAOS_KEEP = '1';

/** How long Jest may stay alive after writing its results before it is stopped (a handle left open). */
const EXIT_GRACE_MS = 60_000;

/**
 * Runs Jest; if it has written its results but does not exit within EXIT_GRACE_MS (something a test left open
 * keeps the process alive), stops it and says so, so a leaked handle cannot hang CI. The results then stand.
 */
function runJest(args, options, resultsFile) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, options);
    let hung = false;
    let doneAt = null;
    const watch = setInterval(() => {
      if (doneAt === null && fs.existsSync(resultsFile)) doneAt = Date.now();
      if (doneAt !== null && Date.now() - doneAt > EXIT_GRACE_MS) {
        hung = true;
        console.error(
          `[tests] Jest wrote its results but did not exit within ${EXIT_GRACE_MS / 1000} s (a handle left open by a ` +
            'test); stopping it. Find the handle with: npm test -- <project> -- --detectOpenHandles',
        );
        child.kill('SIGKILL');
      }
    }, 1000);
    child.on('close', (status) => {
      clearInterval(watch);
      resolve({ status, hung });
    });
  });
}

const jestSucceeded = (resultsFile) =>
  fs.existsSync(resultsFile) && JSON.parse(fs.readFileSync(resultsFile, 'utf8')).success === true;

let jestFailed = false;
const summary = [];
try {
  for (const run of runs) {
    const resultsFile = path.join(
      root,
      'test-results',
      `jest-${run.client}-${run.projects.join('-')}${run.env ? '-pool-of-one' : ''}.json`,
    );
    fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
    fs.rmSync(resultsFile, { force: true });
    console.log(
      `\n[${run.client}] Jest: ${run.projects.join(', ')}${run.client === 'native' ? ' (native pulsar-client)' : ''}${run.label ? `, ${run.label}` : ''}`,
    );
    const jest = await runJest(
      [
        '--experimental-vm-modules',
        '--no-warnings=ExperimentalWarning',
        path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
        '--selectProjects',
        ...run.projects,
        ...(run.ignore?.length ? ['--testPathIgnorePatterns', ...run.ignore] : []),
        ...(run.serial ? ['--runInBand'] : []),
        '--json',
        `--outputFile=${resultsFile}`,
        ...passThrough,
        ...(run.paths ?? []),
      ],
      { cwd: root, stdio: 'inherit', env: { ...process.env, ...run.env, BQ_TEST_CLIENT: run.client } },
      resultsFile,
    );
    if (jest.status !== 0 && !(jest.hung && jestSucceeded(resultsFile))) jestFailed = true;
    if (fs.existsSync(resultsFile)) {
      const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
      // A suite that fails to load has no failed tests of its own; count it so the line cannot read clean.
      const runFailed = results.numFailedTests + results.numRuntimeErrorTestSuites;
      passed += results.numPassedTests;
      failed += runFailed;
      summary.push(
        `[${run.client}${run.label ? `, ${run.label}` : ''}] ${run.projects.join(', ')}: ${results.numPassedTests} passed, ${runFailed} failed, ${results.numPendingTests} skipped`,
        ...failedNames(results).map((name) => `  failed: ${name}`),
      );
    } else {
      failed += 1;
      summary.push(`[${run.client}] Jest wrote no results (exit ${jest.status})`);
    }
  }
} finally {
  if (chaosOwned) await stopBroker(brokerSettings(chaosEnv()));
  if (broker?.started) await stopBroker();
  if (postgres?.started) await stopPostgres();
  await stopSecuredBroker(undefined, securedOwner);
  await stopCluster(undefined, clusterOwner);
}
for (const line of summary) console.log(line);
console.log(`${passed} passed, ${failed} failed`);
process.exit(!jestFailed && failed === 0 ? 0 : 1);
