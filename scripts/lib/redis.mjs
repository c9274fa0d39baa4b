// Starts and stops a real Redis (Debian's redis-server) on 127.0.0.1 for the idempotency tests.
// Installed with apt-get when missing (needs root, as in CI containers); never persisted (--save '').
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';

const log = (message) => process.stderr.write(`[redis] ${message}\n`);

export function redisSettings(env = process.env) {
  const port = Number(env.BQ_REDIS_PORT ?? 16379);
  return { port, url: `redis://127.0.0.1:${port}` };
}

/** Sends PING, resolves true on +PONG. */
export function redisAnswers(port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

function redisServerPath() {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

function installRedis() {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('redis-server is missing; install it (apt-get install -y redis-server) or run as root');
  }
  log('installing redis-server with apt-get (once)');
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', 'redis-server'], { stdio: 'inherit' });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
    if (install().status !== 0) throw new Error('apt-get could not install redis-server; see the output above');
  }
}

let child = null;

/** Reuses a Redis already answering on the port, else starts one; `started` says whether we own it. */
export async function ensureRedis(env = process.env) {
  const settings = redisSettings(env);
  if (await redisAnswers(settings.port)) return { started: false, ...settings };
  if (!redisServerPath()) installRedis();
  const server = redisServerPath();
  if (!server) throw new Error('redis-server not found after installing it');
  child = spawn(
    server,
    ['--port', String(settings.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const deadline = Date.now() + 15_000;
  while (!(await redisAnswers(settings.port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${settings.port} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { started: true, pid: child.pid, ...settings };
}

/** Stops the Redis this process started (by its pid); a reused one is left alone. */
export async function stopRedis() {
  const running = child;
  child = null;
  if (!running || running.exitCode !== null) return false;
  const exited = new Promise((resolve) => running.once('exit', resolve));
  running.kill('SIGTERM');
  let timer;
  const patience = new Promise((resolve) => {
    timer = setTimeout(resolve, 5000);
  });
  await Promise.race([exited, patience]);
  clearTimeout(timer); // a pending timer would keep Jest from exiting
  return true;
}
