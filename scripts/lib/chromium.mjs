// Finds Debian's headless Chromium for the dashboard's browser tests, installing it with apt-get when missing
// (root, as in CI). Nothing here downloads a browser build of its own: the binary is the distribution's package.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const log = (message) => process.stderr.write(`[chromium] ${message}\n`);
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium binary: $BQ_CHROMIUM when set, else Debian's, else null. */
export function chromiumPath(env = process.env) {
  if (env.BQ_CHROMIUM) return fs.existsSync(env.BQ_CHROMIUM) ? env.BQ_CHROMIUM : null;
  return CANDIDATES.find((candidate) => fs.existsSync(candidate)) ?? null;
}

function aptInstall() {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('chromium is missing; install it (apt-get install -y chromium) or run as root');
  }
  log('installing chromium with apt-get (once)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    if (install().status !== 0) throw new Error('apt-get could not install chromium; see the output above');
  }
}

/** The path of a usable Chromium, installed first when the machine has none. */
export function ensureChromium(env = process.env) {
  const found = chromiumPath(env);
  if (found) return found;
  aptInstall();
  const installed = chromiumPath(env);
  if (!installed) throw new Error('chromium not found after installing it');
  return installed;
}

// `node scripts/lib/chromium.mjs` installs it by hand.
if (import.meta.url === `file://${process.argv[1]}`) console.log(ensureChromium());
