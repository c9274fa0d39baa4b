// Builds and starts the sample app as a separate process (used by npm run demo and the end-to-end tests).
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Compiles the library (dist/esm/) and the sample app (dist-sample/). */
export function buildSampleApp() {
  for (const project of ['tsconfig.build.json', 'sample-app/tsconfig.json']) {
    const result = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: root,
      stdio: 'inherit',
    });
    if (result.status !== 0) throw new Error(`tsc -p ${project} failed`);
  }
}

export const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** Starts dist-sample/main.js with `env` (PORT required) and resolves once its HTTP API answers. */
export async function startSampleApp(env) {
  const child = spawn(process.execPath, [path.join(root, 'dist-sample/main.js')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(String(chunk)));
  // Nest's shutdown hooks close the app, then re-raise the signal: exit by SIGTERM is a clean stop.
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const base = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the sample app exited:\n${output.join('')}`);
    try {
      if ((await fetch(`${base}/orders`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the sample app did not start within 60 s:\n${output.join('')}`);
    }
    await sleep(200);
  }
  let stopping = null;
  return {
    base,
    output,
    /** SIGTERM, then waits (SIGKILL after 20 s); resolves to the exit code or signal name. */
    stop() {
      stopping ??= (async () => {
        child.kill('SIGTERM');
        const code = await Promise.race([exited, sleep(20_000).then(() => 'timeout')]);
        if (code === 'timeout') child.kill('SIGKILL');
        return code;
      })();
      return stopping;
    },
  };
}
