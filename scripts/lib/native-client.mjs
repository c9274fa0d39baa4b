// Makes the native `pulsar-client` package loadable from this project, building it from source when its
// prebuilt binary cannot be downloaded (as on machines that reach only the package registries).
//
// Inputs (see ../shared/vendor/README.md): the addon's source from the npm tarball, libpulsar from the
// manylinux wheel of the Python `pulsar-client` on PyPI, and the C++ client's headers, vendored beside
// the project (or any folder given by BQ_PULSAR_CPP_INCLUDE). The build goes into a cache folder keyed by
// every input's version and Node's ABI; the project's node_modules/pulsar-client becomes a link to it, so
// the library's dynamic import('pulsar-client') resolves it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokerSettings } from './broker.mjs';
import { withDirLock } from './build-lock.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Pinned inputs: changing one makes a new cache entry. */
export const NATIVE_INPUTS = {
  addon: '1.18.0',
  wheel: '3.13.0',
  cppHeaders: '4.2.0',
  wheelPlatform: 'manylinux_2_28_x86_64',
  wheelPython: '3.11',
};

export class NativeSetupError extends Error {
  constructor(step, message) {
    super(`native pulsar-client: ${step}: ${message}`);
    this.step = step;
  }
}

const log = (message) => process.stderr.write(`[native] ${message}\n`);

export function nativeSettings(env = process.env) {
  const vendorDir = path.resolve(env.BQ_VENDOR_DIR ?? path.join(root, '..', 'shared', 'vendor'));
  const key = [
    `pulsar-client-${NATIVE_INPUTS.addon}`,
    `libpulsar-wheel-${NATIVE_INPUTS.wheel}`,
    `headers-${NATIVE_INPUTS.cppHeaders}`,
    `node-abi-${process.versions.modules}`,
    `${process.platform}-${process.arch}`,
  ].join('+');
  return {
    vendorDir,
    headersTarball: path.join(vendorDir, `pulsar-client-cpp-${NATIVE_INPUTS.cppHeaders}-include.tar.gz`),
    includeOverride: env.BQ_PULSAR_CPP_INCLUDE ? path.resolve(env.BQ_PULSAR_CPP_INCLUDE) : null,
    buildDir: path.join(brokerSettings(env).cacheDir, 'native', key),
    link: path.join(root, 'node_modules', 'pulsar-client'),
  };
}

/** Loads `pulsar-client` from `cwd` in a child process (a broken addon must not take this process down). */
function probeLoad(cwd) {
  const probe = spawnSync(
    process.execPath,
    ['-e', "const p = require('pulsar-client'); if (typeof p.Client !== 'function') throw new Error('no Client')"],
    { cwd, encoding: 'utf8', timeout: 30_000 },
  );
  const lines = `${probe.stderr ?? ''}`.split('\n').filter((line) => /Error|error:/.test(line));
  return { ok: probe.status === 0, reason: lines[0]?.trim() ?? `exit ${probe.status}` };
}

function run(step, command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw new NativeSetupError(step, `cannot run ${command}: ${result.error.message}`);
  if (result.status !== 0) {
    const tail = `${result.stdout ?? ''}\n${result.stderr ?? ''}`.trim().split('\n').slice(-25).join('\n');
    throw new NativeSetupError(step, `${command} ${args.join(' ')} exited with ${result.status}:\n${tail}`);
  }
  return result;
}

function timed(step, action) {
  const started = Date.now();
  log(`${step}…`);
  const value = action();
  log(`${step}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return value;
}

/** The C++ headers: a folder holding pulsar/Client.h. */
function ensureHeaders(settings, work) {
  if (settings.includeOverride) {
    if (!fs.existsSync(path.join(settings.includeOverride, 'pulsar', 'Client.h'))) {
      throw new NativeSetupError(
        'headers',
        `BQ_PULSAR_CPP_INCLUDE=${settings.includeOverride} holds no pulsar/Client.h (point it at the C++ client's include/ folder)`,
      );
    }
    return settings.includeOverride;
  }
  if (!fs.existsSync(settings.headersTarball)) {
    throw new NativeSetupError(
      'headers',
      `${settings.headersTarball} is missing: it comes from the project's shared vendor folder (override the folder ` +
        'with BQ_VENDOR_DIR, or the include folder itself with BQ_PULSAR_CPP_INCLUDE)',
    );
  }
  run('headers', 'tar', ['-xzf', settings.headersTarball, '-C', work]);
  const found = fs
    .readdirSync(work, { recursive: true })
    .map(String)
    .find((file) => file.endsWith(path.join('include', 'pulsar', 'Client.h')));
  if (!found) throw new NativeSetupError('headers', `${settings.headersTarball} has no include/pulsar/Client.h`);
  return path.join(work, path.dirname(path.dirname(found)));
}

/** libpulsar from the Python client's manylinux wheel, with a libpulsar.so link for the linker. */
function ensureLibpulsar(work, libDir) {
  const wheelDir = path.join(work, 'wheel');
  const python = process.env.BQ_PYTHON ?? 'python3';
  run('libpulsar', python, [
    '-m',
    'pip',
    'download',
    '--no-deps',
    '--only-binary=:all:',
    '--platform',
    NATIVE_INPUTS.wheelPlatform,
    '--python-version',
    NATIVE_INPUTS.wheelPython,
    '--implementation',
    'cp',
    '-d',
    wheelDir,
    `pulsar-client==${NATIVE_INPUTS.wheel}`,
  ]);
  const wheel = fs.readdirSync(wheelDir).find((file) => file.endsWith('.whl'));
  if (!wheel) throw new NativeSetupError('libpulsar', `pip saved no wheel of pulsar-client==${NATIVE_INPUTS.wheel}`);
  const extract = [
    'import sys, zipfile, os',
    'z = zipfile.ZipFile(sys.argv[1])',
    "names = [n for n in z.namelist() if n.startswith('pulsar_client.libs/libpulsar')]",
    "assert names, 'no pulsar_client.libs/libpulsar*.so in the wheel'",
    'data = z.read(names[0]); name = os.path.basename(names[0])',
    "open(os.path.join(sys.argv[2], name), 'wb').write(data); print(name)",
  ].join('\n');
  fs.mkdirSync(libDir, { recursive: true });
  const name = run('libpulsar', python, ['-c', extract, path.join(wheelDir, wheel), libDir]).stdout.trim();
  fs.rmSync(path.join(libDir, 'libpulsar.so'), { force: true });
  fs.symlinkSync(name, path.join(libDir, 'libpulsar.so'));
}

function buildAddon(buildDir, includeDir, libDir) {
  fs.writeFileSync(
    path.join(buildDir, 'package.json'),
    JSON.stringify({ name: 'babelqueue-native-build', private: true }, null, 2),
  );
  const nodeDir = path.dirname(path.dirname(process.execPath));
  if (!fs.existsSync(path.join(nodeDir, 'include', 'node', 'node.h'))) {
    throw new NativeSetupError('addon', `Node's headers are missing under ${nodeDir}/include/node`);
  }
  run(
    'addon',
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', `pulsar-client@${NATIVE_INPUTS.addon}`, '--foreground-scripts'],
    {
      cwd: buildDir,
      env: {
        ...process.env,
        npm_config_build_from_source: 'true',
        npm_config_nodedir: nodeDir,
        CXXFLAGS: `${process.env.CXXFLAGS ?? ''} -I${includeDir}`.trim(),
        LDFLAGS: `${process.env.LDFLAGS ?? ''} -L${libDir} -Wl,-rpath,${libDir}`.trim(),
      },
    },
  );
}

/**
 * Points node_modules/pulsar-client at the cached build. The new link is made beside it and renamed over the old
 * one, so that two runs at once cannot trip over each other's half-made link.
 */
function linkInto(settings) {
  const target = path.join(settings.buildDir, 'node_modules', 'pulsar-client');
  fs.mkdirSync(path.dirname(settings.link), { recursive: true });
  const existing = fs.lstatSync(settings.link, { throwIfNoEntry: false });
  // A real install (a directory) cannot be renamed over; a link can.
  if (existing && !existing.isSymbolicLink()) fs.rmSync(settings.link, { recursive: true, force: true });
  const fresh = `${settings.link}.link-${process.pid}`;
  fs.rmSync(fresh, { force: true });
  fs.symlinkSync(target, fresh, 'dir');
  fs.renameSync(fresh, settings.link);
}

/**
 * Makes `pulsar-client` loadable from the project root. Returns { source: 'installed' | 'cache' | 'built', seconds }.
 * Throws NativeSetupError naming the step and the missing input.
 */
export function ensureNativeClient(env = process.env) {
  const started = Date.now();
  const settings = nativeSettings(env);
  const done = (source) => ({ source, seconds: (Date.now() - started) / 1000, buildDir: settings.buildDir });
  const installed = fs.lstatSync(settings.link, { throwIfNoEntry: false });
  if (installed && probeLoad(root).ok) return done(installed.isSymbolicLink() ? 'cache' : 'installed');

  const cached = path.join(settings.buildDir, 'node_modules', 'pulsar-client');
  const usable = () => fs.existsSync(cached) && probeLoad(settings.buildDir).ok;
  if (usable()) {
    linkInto(settings);
    return done('cache');
  }
  // One build at a time into the cache folder: a second run waits for the first and then finds its build.
  return withDirLock(
    `${settings.buildDir}.lock`,
    () => {
      if (usable()) {
        linkInto(settings);
        return done('cache');
      }
      build(settings);
      linkInto(settings);
      return done('built');
    },
    { onWait: () => log(`another run is building the native client into ${settings.buildDir}; waiting for it`) },
  );
}

function build(settings) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new NativeSetupError(
      'platform',
      `building from source is set up for linux-x64 only (this is ${process.platform}-${process.arch}); run "npm install pulsar-client"`,
    );
  }
  log(`building pulsar-client@${NATIVE_INPUTS.addon} from source into ${settings.buildDir} (once)`);
  fs.rmSync(settings.buildDir, { recursive: true, force: true });
  const work = path.join(settings.buildDir, 'inputs');
  const libDir = path.join(settings.buildDir, 'lib');
  fs.mkdirSync(work, { recursive: true });
  const includeDir = timed(`headers ${NATIVE_INPUTS.cppHeaders}`, () => ensureHeaders(settings, work));
  timed(`libpulsar from the PyPI wheel pulsar-client==${NATIVE_INPUTS.wheel}`, () => ensureLibpulsar(work, libDir));
  timed(`compiling the addon (about a minute on 2 cores)`, () => buildAddon(settings.buildDir, includeDir, libDir));
  const check = probeLoad(settings.buildDir);
  if (!check.ok) throw new NativeSetupError('load', `the built addon does not load: ${check.reason}`);
  fs.rmSync(path.join(work, 'wheel'), { recursive: true, force: true });
}

/** Whether `pulsar-client` loads from the project root right now (no build). */
export const nativeClientLoads = () => probeLoad(root).ok;
