// Starts and stops a real PostgreSQL (Debian's postgresql package) on 127.0.0.1 for the outbox suites.
// A throw-away cluster: initdb into a temporary directory, trust authentication on loopback only, fsync off
// (nothing in it needs to survive the run). Installed with apt-get when missing (needs root, as in CI).
// PostgreSQL refuses to run as root, so under root the cluster is owned by and runs as the `postgres` user.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const log = (message) => process.stderr.write(`[postgres] ${message}\n`);

export function postgresSettings(env = process.env) {
  const port = Number(env.BQ_PG_PORT ?? 15432);
  const dataDir = env.BQ_PG_DATA ?? path.join(os.tmpdir(), `babelqueue-pg-${port}`);
  return { port, dataDir, url: `postgres://postgres@127.0.0.1:${port}/postgres` };
}

/** The directory of initdb / pg_ctl / pg_isready of the newest installed major version, or null. */
function binDir() {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

const runsAsRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL tool, as the postgres user when we are root. */
function pgTool(tool, args, options = {}) {
  const command = path.join(binDir(), tool);
  const [file, argv] = runsAsRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return spawnSync(file, argv, { encoding: 'utf8', ...options });
}

function installPostgres() {
  if (!runsAsRoot()) {
    throw new Error('PostgreSQL is missing; install it (apt-get install -y postgresql) or run as root');
  }
  log('installing postgresql with apt-get (once)');
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'postgresql'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
    if (install().status !== 0) throw new Error('apt-get could not install postgresql; see the output above');
  }
}

/** True when a PostgreSQL accepts connections on 127.0.0.1:port. */
export function postgresAnswers(port) {
  if (!binDir()) return false;
  return pgTool('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port), '-t', '2']).status === 0;
}

let owned = null;

/** Reuses a PostgreSQL already answering on the port, else starts one; `started` says whether we own it. */
export async function ensurePostgres(env = process.env) {
  const settings = postgresSettings(env);
  if (postgresAnswers(settings.port)) return { started: false, ...settings };
  if (!binDir()) installPostgres();
  if (!binDir()) throw new Error('pg_ctl not found after installing postgresql');
  const { dataDir, port } = settings;
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (runsAsRoot()) spawnSync('chown', ['postgres:postgres', dataDir]);
  const init = pgTool('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}${init.stderr}`);
  const logFile = path.join(dataDir, 'server.log');
  const options = [
    `-p ${port}`,
    `-k ${dataDir}`, // the Unix socket stays inside the throw-away directory
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  const start = pgTool('pg_ctl', ['-D', dataDir, '-o', options, '-l', logFile, '-w', '-t', '60', 'start']);
  if (start.status !== 0) {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : '';
    throw new Error(`PostgreSQL did not start on port ${port}:\n${start.stdout}${start.stderr}${tail}`);
  }
  owned = settings;
  return { started: true, ...settings };
}

/** Stops the PostgreSQL this process started and removes its directory; a reused one is left alone. */
export async function stopPostgres() {
  const running = owned;
  owned = null;
  if (!running) return false;
  pgTool('pg_ctl', ['-D', running.dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
  fs.rmSync(running.dataDir, { recursive: true, force: true });
  return true;
}
