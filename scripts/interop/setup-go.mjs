#!/usr/bin/env node
// Builds the Go interop peer (test/interop/peers/go) against the pinned Go BabelQueue SDK modules from
// the Go module proxy. The build runs in a copy under the cache directory (GOFLAGS=-mod=mod there, so
// the checked-in go.mod/go.sum are never rewritten); the binary is cached per content hash of the peer
// sources and the Go version. GOMODCACHE/GOCACHE are Go's defaults, so reruns download nothing.
//
//   node scripts/interop/setup-go.mjs            # prints the peer description as JSON
//
// BQ_INTEROP_GO picks the go command (default go). When the proxy answers that the SDK module does not
// exist (403/404/410: a final answer), the result is { ok: false, code: 'SDK_UNAVAILABLE' }.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InteropSetupError, interopCacheDir, log, peersDir, run, sha256, withLock } from './common.mjs';

const sourceDir = path.join(peersDir, 'go');
const SDK_MODULES = ['github.com/babelqueue/babelqueue-go', 'github.com/babelqueue/babelqueue-go/pulsar'];

function goDirective(goMod) {
  const match = /^go\s+(\d+)\.(\d+)/m.exec(goMod);
  return match ? [Number(match[1]), Number(match[2])] : [1, 21];
}

function findGo(goMod) {
  const go = process.env.BQ_INTEROP_GO ?? 'go';
  const [major, minor] = goDirective(goMod);
  const install = `Install Go >= ${major}.${minor} (https://go.dev/dl/ or your package manager) or point BQ_INTEROP_GO at one.`;
  const probe = run(go, ['env', 'GOVERSION']);
  if (probe.error || probe.status !== 0) {
    throw new InteropSetupError(
      `the Go interop peer needs the Go toolchain, but "${go}" cannot be run (${probe.error?.code ?? probe.stderr.trim()})`,
      {
        code: 'GO_MISSING',
        hint: install,
      },
    );
  }
  const version = probe.stdout.trim().replace(/^go/, '');
  const [vMajor, vMinor] = version.split('.').map(Number);
  if (vMajor < major || (vMajor === major && vMinor < minor)) {
    throw new InteropSetupError(`"${go}" is Go ${version}; the peer's go.mod needs >= ${major}.${minor}`, {
      code: 'GO_MISSING',
      hint: install,
    });
  }
  return { go, version };
}

/** The pinned SDK module versions, from the checked-in go.mod. */
export function goPins(goMod = fs.readFileSync(path.join(sourceDir, 'go.mod'), 'utf8')) {
  const pins = {};
  for (const module of [...SDK_MODULES, 'github.com/apache/pulsar-client-go']) {
    const match = new RegExp(`^\\s*${module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\s+(v\\S+)`, 'm').exec(goMod);
    if (match) pins[module] = match[1];
  }
  for (const module of SDK_MODULES) {
    if (!pins[module]) throw new InteropSetupError(`${sourceDir}/go.mod must require ${module} at an exact version`);
  }
  return pins;
}

/** A proxy answer that says the SDK module (version) does not exist there; a timeout is not one. */
function unavailable(stderr) {
  const answers = new Map();
  for (const line of stderr.split('\n')) {
    const match =
      /(github\.com\/babelqueue\/babelqueue-go(?:\/\w+)?@v\S+): reading (\S+): (40[34]|410)\s*([A-Za-z ]*)/.exec(line);
    if (match) answers.set(match[1], `${match[3]} ${match[4].trim()} (${match[2]})`);
  }
  if (answers.size === 0) return null;
  return [...answers].map(([module, answer]) => `${module} → ${answer}`).join('; ');
}

/**
 * Returns { sdk: 'go', binary, versions, cached } once the peer is built.
 * Throws InteropSetupError: GO_MISSING (install Go), SDK_UNAVAILABLE (the proxy says the module is not
 * there), BUILD_FAILED (anything else, e.g. no network on the first run).
 */
export async function ensureGoPeer() {
  const files = fs
    .readdirSync(sourceDir)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || f.endsWith('.go'))
    .sort();
  const contents = files.map((f) => fs.readFileSync(path.join(sourceDir, f)));
  const goMod = fs.readFileSync(path.join(sourceDir, 'go.mod'), 'utf8');
  const pins = goPins(goMod);
  const toolchain = findGo(goMod);
  const key = sha256(...files, ...contents, toolchain.version).slice(0, 12);
  const dir = path.join(interopCacheDir(), `go-peer-${key}`);
  const binary = path.join(dir, 'peer');
  const marker = path.join(dir, '.bq-interop-ready');
  const describe = (cached) => ({ sdk: 'go', binary, versions: { ...pins, go: toolchain.version }, cached });

  if (fs.existsSync(marker) && fs.existsSync(binary)) return describe(true);
  return withLock(`${dir}.lock`, async () => {
    if (fs.existsSync(marker) && fs.existsSync(binary)) return describe(true);
    const build = path.join(dir, 'src');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(build, { recursive: true });
    files.forEach((file, i) => fs.writeFileSync(path.join(build, file), contents[i]));
    log(
      `building the Go peer (${Object.entries(pins)
        .map(([m, v]) => `${m}@${v}`)
        .join(', ')}) with Go ${toolchain.version}`,
    );
    const env = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
    const result = run(toolchain.go, ['build', '-trimpath', '-o', binary, '.'], {
      cwd: build,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (result.status !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      const answer = unavailable(result.stderr);
      if (answer) {
        throw new InteropSetupError(
          `the Go BabelQueue SDK is not on the Go module proxy (GOPROXY=${run(toolchain.go, ['env', 'GOPROXY']).stdout.trim()}): ${answer}`,
          { code: 'SDK_UNAVAILABLE', details: result.stderr },
        );
      }
      throw new InteropSetupError(
        `go build of the interop peer failed:\n${result.stderr.trim().split('\n').slice(-20).join('\n')}`,
        {
          code: 'BUILD_FAILED',
          hint: 'The first run needs the Go module proxy (GOPROXY) to download the pinned modules.',
        },
      );
    }
    fs.writeFileSync(marker, `${JSON.stringify(pins)}\n`);
    return describe(false);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${JSON.stringify({ ok: true, ...(await ensureGoPeer()) })}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.stdout.write(
      `${JSON.stringify({ ok: false, code: error.code ?? 'SETUP_FAILED', reason: error.message })}\n`,
    );
    process.exit(1);
  }
}
