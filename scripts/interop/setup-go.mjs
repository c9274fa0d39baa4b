#!/usr/bin/env node
// Builds the Go interop peer (test/interop/peers/go) against the Go BabelQueue SDK 1.8.0 from the
// vendored tarball (the Go module proxy does not serve the SDK; it serves everything the SDK requires).
// The steps, each named in the error when it fails:
//
//   unpack       <vendor>/babelqueue-go-1.8.0.tar.gz → <cache>/vendor/babelqueue-go-1.8.0-<hash>
//   go mod tidy  in a build copy whose vendored-sdk links to that tree: `go mod tidy -diff` downloads
//                what the module needs and fails when the checked-in go.mod/go.sum are not tidy
//   go build     -mod=readonly, so the build uses exactly the checked-in go.mod/go.sum
//
// <vendor> is BQ_VENDOR_DIR (default <repo>/../shared/vendor), <cache> is
// ~/.cache/babelqueue-nestjs-pulsar/interop. The binary is cached per content hash of the peer sources,
// the tarball and the Go version; GOMODCACHE/GOCACHE are Go's defaults, so reruns download nothing.
//
//   node scripts/interop/setup-go.mjs            # prints the peer description as JSON
//
// BQ_INTEROP_GO picks the go command (default go).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InteropSetupError, interopCacheDir, log, peersDir, repoRoot, run, sha256, withLock } from './common.mjs';

const sourceDir = path.join(peersDir, 'go');
/** The SDK release the peer is built against, and where its tarball unpacks. */
export const GO_SDK = { release: '1.8.0', tarball: 'babelqueue-go-1.8.0.tar.gz', root: 'babelqueue-go-1.8.0' };
/** The build copy's link to the unpacked SDK (go.mod's replace directives point into it). */
const SDK_LINK = 'vendored-sdk';

export const vendorDir = (env = process.env) => env.BQ_VENDOR_DIR || path.join(repoRoot, '..', 'shared', 'vendor');

const stepError = (step, code, message, hint) => {
  const error = new InteropSetupError(`step "${step}" failed: ${message}`, { code, hint });
  error.step = step;
  return error;
};

const tail = (text, lines = 20) => text.trim().split('\n').slice(-lines).join('\n');

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
    throw stepError(
      'find go',
      'GO_MISSING',
      `the Go interop peer needs the Go toolchain, but "${go}" cannot be run (${probe.error?.code ?? probe.stderr.trim()})`,
      install,
    );
  }
  const version = probe.stdout.trim().replace(/^go/, '');
  const [vMajor, vMinor] = version.split('.').map(Number);
  if (vMajor < major || (vMajor === major && vMinor < minor)) {
    throw stepError(
      'find go',
      'GO_MISSING',
      `"${go}" is Go ${version}; the peer's go.mod needs >= ${major}.${minor}`,
      install,
    );
  }
  return { go, version };
}

/** The module versions the peer is built with, from the checked-in go.mod (the SDK's own is the tarball's). */
export function goVersions(goMod = fs.readFileSync(path.join(sourceDir, 'go.mod'), 'utf8')) {
  const pinned = (module) => {
    const match = new RegExp(`^\\s*${module.replace(/[./]/g, '\\$&')}\\s+(v\\S+)`, 'm').exec(goMod);
    return match ? match[1] : 'unknown';
  };
  return {
    'github.com/babelqueue/babelqueue-go': `${GO_SDK.release} (vendored ${GO_SDK.tarball}, with its otel module)`,
    'github.com/apache/pulsar-client-go': pinned('github.com/apache/pulsar-client-go'),
    'go.opentelemetry.io/otel/sdk': pinned('go.opentelemetry.io/otel/sdk'),
  };
}

/**
 * Unpacks the SDK tarball once into the cache (atomically: a half-unpacked tree is never used) and
 * returns { root, tarballHash }.
 */
export async function unpackGoSdk(env = process.env) {
  const tarball = path.join(vendorDir(env), GO_SDK.tarball);
  if (!fs.existsSync(tarball)) {
    throw stepError(
      'unpack',
      'VENDOR_MISSING',
      `the Go SDK tarball ${tarball} does not exist`,
      'The Go peer builds from the vendored SDK release: point BQ_VENDOR_DIR at the folder that holds it (default <repo>/../shared/vendor).',
    );
  }
  const tarballHash = sha256(fs.readFileSync(tarball));
  const target = path.join(interopCacheDir(env), 'vendor', `${GO_SDK.root}-${tarballHash.slice(0, 12)}`);
  const root = path.join(target, GO_SDK.root);
  const marker = path.join(target, '.bq-unpacked');
  if (fs.existsSync(marker)) return { root, tarballHash };
  return withLock(`${target}.lock`, async () => {
    if (fs.existsSync(marker)) return { root, tarballHash };
    const staging = `${target}.tmp-${process.pid}`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.rmSync(target, { recursive: true, force: true });
    fs.mkdirSync(staging, { recursive: true });
    log(`unpacking ${tarball} into ${target}`);
    const untar = run('tar', ['-xzf', tarball, '-C', staging], { stdio: ['ignore', 'pipe', 'pipe'] });
    if (untar.error || untar.status !== 0) {
      fs.rmSync(staging, { recursive: true, force: true });
      throw stepError(
        'unpack',
        'UNPACK_FAILED',
        `tar -xzf ${tarball} failed: ${untar.error?.message ?? tail(untar.stderr, 5)}`,
      );
    }
    for (const file of ['go.mod', path.join('pulsar', 'go.mod')]) {
      if (!fs.existsSync(path.join(staging, GO_SDK.root, file))) {
        fs.rmSync(staging, { recursive: true, force: true });
        throw stepError('unpack', 'UNPACK_FAILED', `${tarball} has no ${GO_SDK.root}/${file}`);
      }
    }
    fs.writeFileSync(path.join(staging, '.bq-unpacked'), `${tarballHash}\n`);
    fs.renameSync(staging, target);
    return { root, tarballHash };
  });
}

/**
 * Returns { sdk: 'go', binary, versions, cached } once the peer is built.
 * Throws InteropSetupError with `step` (unpack, find go, go mod tidy, go build) and `code`.
 */
export async function ensureGoPeer() {
  const sdk = await unpackGoSdk();
  const files = fs
    .readdirSync(sourceDir)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || f.endsWith('.go'))
    .sort();
  const contents = files.map((f) => fs.readFileSync(path.join(sourceDir, f)));
  const goMod = fs.readFileSync(path.join(sourceDir, 'go.mod'), 'utf8');
  const toolchain = findGo(goMod);
  const versions = { ...goVersions(goMod), go: toolchain.version };
  const key = sha256(...files, ...contents, sdk.tarballHash, toolchain.version).slice(0, 12);
  const dir = path.join(interopCacheDir(), `go-peer-${key}`);
  const binary = path.join(dir, 'peer');
  const marker = path.join(dir, '.bq-interop-ready');
  const describe = (cached) => ({ sdk: 'go', binary, versions, cached });

  if (fs.existsSync(marker) && fs.existsSync(binary)) return describe(true);
  return withLock(`${dir}.lock`, async () => {
    if (fs.existsSync(marker) && fs.existsSync(binary)) return describe(true);
    const build = path.join(dir, 'src');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(build, { recursive: true });
    files.forEach((file, i) => fs.writeFileSync(path.join(build, file), contents[i]));
    fs.symlinkSync(sdk.root, path.join(build, SDK_LINK), 'dir');
    // GOFLAGS is cleared so that a user's -mod=mod cannot let the build rewrite go.mod/go.sum.
    const env = { ...process.env, GOFLAGS: '', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
    const goRun = (args) => run(toolchain.go, args, { cwd: build, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const failed = (step, code, message, hint) => {
      fs.rmSync(dir, { recursive: true, force: true });
      return stepError(step, code, message, hint);
    };

    log(
      `go mod tidy -diff for the Go peer (babelqueue-go ${GO_SDK.release} from ${sdk.root}) with Go ${toolchain.version}`,
    );
    const tidy = goRun(['mod', 'tidy', '-diff']);
    if (tidy.status !== 0) {
      const diff = tidy.stdout.trim();
      throw diff
        ? failed(
            'go mod tidy',
            'GO_MOD_UNTIDY',
            `the checked-in test/interop/peers/go/go.mod or go.sum is not what go mod tidy makes of it:\n${tail(diff, 30)}`,
            'Rebuild them with the recipe in ../shared/vendor/README.md (the require block and go.sum of the SDK pulsar/go.mod).',
          )
        : failed(
            'go mod tidy',
            'GO_MOD_FAILED',
            tail(tidy.stderr || String(tidy.error?.message)),
            'The first run needs the Go module proxy (GOPROXY) for pulsar-client-go and its dependencies.',
          );
    }
    log(`go build of the Go peer`);
    const ldflags = `-X main.sdkRelease=${GO_SDK.release}`;
    const built = goRun(['build', '-mod=readonly', '-trimpath', '-ldflags', ldflags, '-o', binary, '.']);
    if (built.status !== 0) {
      throw failed('go build', 'BUILD_FAILED', tail(built.stderr || String(built.error?.message)));
    }
    fs.writeFileSync(marker, `${JSON.stringify(versions)}\n`);
    return describe(false);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${JSON.stringify({ ok: true, ...(await ensureGoPeer()) })}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.stdout.write(
      `${JSON.stringify({ ok: false, code: error.code ?? 'SETUP_FAILED', step: error.step ?? null, reason: error.message })}\n`,
    );
    process.exit(1);
  }
}
