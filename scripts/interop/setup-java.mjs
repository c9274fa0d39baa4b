#!/usr/bin/env node
// Builds the Java interop peer (test/interop/peers/java) against the Java BabelQueue SDK
// (com.babelqueue:babelqueue-core and babelqueue-pulsar 1.0.0). The Maven repository here does not serve
// the SDK, so it is built from the vendored source tarball and installed into a local Maven repository
// in the cache (~/.cache/babelqueue-nestjs-pulsar/interop/java-m2); everything else it needs
// (pulsar-client 3.3.5, plugins) comes from the Maven repository. Four steps, each named when it fails:
// unpack, mvn install core, mvn install pulsar, peer build. The SDK install is cached per tarball hash,
// the peer per hash of its sources + the tarball + the JDK and Maven versions.
//
//   node scripts/interop/setup-java.mjs            # prints the peer description as JSON
//
// BQ_VENDOR_DIR: the folder holding babelqueue-java-1.0.0.tar.gz (default <repo>/../shared/vendor).
// BQ_INTEROP_JAVA / BQ_INTEROP_MVN pick the java and mvn commands (default java, mvn).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InteropSetupError, interopCacheDir, log, peersDir, repoRoot, run, sha256, withLock } from './common.mjs';

const sourceDir = path.join(peersDir, 'java');
const TARBALL = 'babelqueue-java-1.0.0.tar.gz';
const CORE_DIR = 'babelqueue-java-1.0.0';
const PULSAR_DIR = 'babelqueue-java-pulsar-1.0.0';
const MAIN_CLASS = 'com.babelqueue.interop.Peer';
// Quick JVM start for a short-lived CLI on a small machine.
const JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dfile.encoding=UTF-8'];

export const vendorDir = (env = process.env) => env.BQ_VENDOR_DIR ?? path.resolve(repoRoot, '..', 'shared', 'vendor');

function toolchain() {
  const java = process.env.BQ_INTEROP_JAVA ?? 'java';
  const mvn = process.env.BQ_INTEROP_MVN ?? 'mvn';
  const javaProbe = run(java, ['-version']);
  if (javaProbe.error || javaProbe.status !== 0) {
    throw new InteropSetupError(`the Java interop peer needs a JDK >= 17, but "${java}" cannot be run`, {
      code: 'JAVA_MISSING',
      hint: 'Install JDK 17 (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) or point BQ_INTEROP_JAVA at one.',
    });
  }
  const javaVersion = /version "([^"]+)"/.exec(javaProbe.stderr)?.[1] ?? 'unknown';
  if (Number(javaVersion.split('.')[0]) < 17) {
    throw new InteropSetupError(`"${java}" is Java ${javaVersion}; the SDK needs >= 17`, { code: 'JAVA_MISSING' });
  }
  const mvnProbe = run(mvn, ['-v', '-B']);
  if (mvnProbe.error || mvnProbe.status !== 0) {
    throw new InteropSetupError(`the Java interop peer needs Maven, but "${mvn}" cannot be run`, {
      code: 'MAVEN_MISSING',
      hint: 'Install Maven >= 3.8 (Debian/Ubuntu: apt-get install maven) or point BQ_INTEROP_MVN at one.',
    });
  }
  const mvnVersion = /Apache Maven (\S+)/.exec(mvnProbe.stdout)?.[1] ?? 'unknown';
  return { java, mvn, javaVersion, mvnVersion };
}

/** A failed step: the message starts with its name, so a red run says where the build broke. */
function stepFailed(step, result, hint) {
  const output = `${result.stdout}\n${result.stderr}`
    // Maven 3.8 writes a colour reset even in batch mode.
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, '')
    .trim()
    .split('\n')
    .slice(-25)
    .join('\n');
  return new InteropSetupError(
    `Java interop peer: step "${step}" failed (exit ${result.status ?? result.error?.code})\n${output}`,
    { code: 'BUILD_FAILED', hint },
  );
}

function mvnIn(tools, cwd, m2, goals) {
  return run(tools.mvn, ['-B', '-q', '-Dstyle.color=never', `-Dmaven.repo.local=${m2}`, ...goals], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

const MAVEN_HINT = 'The first build needs the Maven repository (pulsar-client 3.3.5, the build plugins).';

/** Unpacks the tarball and installs core, then the Pulsar module, into `m2` (once per tarball hash). */
async function ensureSdkInstalled(tools, tarball, tarHash, m2) {
  const dir = path.join(interopCacheDir(), `java-sdk-${tarHash.slice(0, 12)}`);
  const marker = path.join(dir, '.bq-interop-installed');
  const installed = () =>
    fs.existsSync(marker) &&
    fs.existsSync(path.join(m2, 'com', 'babelqueue', 'babelqueue-pulsar', '1.0.0', 'babelqueue-pulsar-1.0.0.jar'));
  if (installed()) return;
  await withLock(`${dir}.lock`, async () => {
    if (installed()) return;
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    log(`building the Java BabelQueue SDK from ${tarball} (about a minute the first time)`);
    const unpack = run('tar', ['-xzf', tarball, '-C', dir]);
    if (unpack.status !== 0) throw stepFailed('unpack', unpack);
    for (const [step, folder] of [
      ['mvn install core', CORE_DIR],
      ['mvn install pulsar', PULSAR_DIR],
    ]) {
      const cwd = path.join(dir, folder);
      if (!fs.existsSync(path.join(cwd, 'pom.xml'))) {
        throw stepFailed('unpack', { status: 1, stdout: '', stderr: `${TARBALL} has no ${folder}/pom.xml` });
      }
      const result = mvnIn(tools, cwd, m2, ['-DskipTests', 'install']);
      if (result.status !== 0) throw stepFailed(step, result, MAVEN_HINT);
    }
    fs.writeFileSync(marker, `${tarHash}\n`);
  });
}

/** Returns { sdk: 'java', command, args, versions, cached } once the peer is built. */
export async function ensureJavaPeer() {
  const tarball = path.join(vendorDir(), TARBALL);
  if (!fs.existsSync(tarball)) {
    throw stepFailed(
      'unpack',
      { status: 1, stdout: '', stderr: `${tarball} does not exist` },
      'Set BQ_VENDOR_DIR to the folder holding the vendored Java SDK.',
    );
  }
  const tools = toolchain();
  const tarHash = sha256(fs.readFileSync(tarball));
  const files = listFiles(sourceDir);
  const contents = files.map((f) => fs.readFileSync(path.join(sourceDir, f)));
  const key = sha256(tarHash, ...files, ...contents, tools.javaVersion, tools.mvnVersion).slice(0, 12);
  const m2 = path.join(interopCacheDir(), 'java-m2');
  const dir = path.join(interopCacheDir(), `java-peer-${key}`);
  const marker = path.join(dir, '.bq-interop-ready');
  const describe = (cached) => {
    const { classpath, versions } = JSON.parse(fs.readFileSync(marker, 'utf8'));
    return {
      sdk: 'java',
      command: tools.java,
      args: [...JVM_FLAGS, '-cp', classpath, MAIN_CLASS],
      versions,
      cached,
    };
  };
  if (fs.existsSync(marker)) return describe(true);

  await ensureSdkInstalled(tools, tarball, tarHash, m2);
  return withLock(`${dir}.lock`, async () => {
    if (fs.existsSync(marker)) return describe(true);
    const build = path.join(dir, 'src');
    fs.rmSync(dir, { recursive: true, force: true });
    files.forEach((file, i) => {
      fs.mkdirSync(path.dirname(path.join(build, file)), { recursive: true });
      fs.writeFileSync(path.join(build, file), contents[i]);
    });
    log(`building the Java peer with JDK ${tools.javaVersion} and Maven ${tools.mvnVersion}`);
    const cpFile = path.join(dir, 'classpath.txt');
    const result = mvnIn(tools, build, m2, ['package', 'dependency:build-classpath', `-Dmdep.outputFile=${cpFile}`]);
    if (result.status !== 0) throw stepFailed('peer build', result, MAVEN_HINT);
    const classpath = [path.join(build, 'target', 'classes'), fs.readFileSync(cpFile, 'utf8').trim()].join(
      path.delimiter,
    );
    const probe = run(tools.java, [...JVM_FLAGS, '-cp', classpath, MAIN_CLASS, 'versions']);
    const line = probe.stdout.split('\n').find((l) => l.startsWith('{'));
    if (probe.status !== 0 || !line) throw stepFailed('peer build', probe, 'The built peer does not start.');
    const versions = JSON.parse(line).versions;
    fs.writeFileSync(marker, `${JSON.stringify({ classpath, versions })}\n`);
    return describe(false);
  });
}

function listFiles(dir, prefix = '') {
  return fs
    .readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = path.join(prefix, entry.name);
      if (entry.isDirectory()) return entry.name === 'target' ? [] : listFiles(dir, relative);
      return [relative];
    })
    .sort();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${JSON.stringify({ ok: true, ...(await ensureJavaPeer()) })}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.stdout.write(
      `${JSON.stringify({ ok: false, code: error.code ?? 'SETUP_FAILED', reason: error.message })}\n`,
    );
    process.exit(1);
  }
}
