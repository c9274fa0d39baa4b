#!/usr/bin/env node
// Makes the Python interop peer runnable: a virtualenv outside the clone with the pinned BabelQueue
// SDK from PyPI (babelqueue[pulsar,otel], over the official pulsar-client wheel, with the OpenTelemetry
// SDK for the tracing scenarios). Idempotent: a ready venv
// for the same Python and the same pins is reused (a marker file is written only after it verified).
//
//   node scripts/interop/setup-python.mjs          # prints the peer description as JSON
//
// BQ_INTEROP_PYTHON picks the interpreter (default python3).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InteropSetupError, interopCacheDir, log, peersDir, run, sha256, withLock } from './common.mjs';

const MIN_PYTHON = [3, 9];
const requirementsFile = path.join(peersDir, 'python', 'requirements.txt');
export const pythonPeerScript = path.join(peersDir, 'python', 'peer.py');

/** The exact pins of requirements.txt: { babelqueue: '1.24.0', 'pulsar-client': '3.13.0', 'opentelemetry-sdk': … }. */
export function pythonPins(text = fs.readFileSync(requirementsFile, 'utf8')) {
  const pins = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z0-9_.-]+)(\[[^\]]*\])?==([^\s#;]+)/.exec(line.trim());
    if (match) pins[match[1].toLowerCase()] = match[3];
  }
  if (!pins.babelqueue || !pins['pulsar-client'] || !pins['opentelemetry-sdk']) {
    throw new InteropSetupError(
      `${requirementsFile} must pin babelqueue, pulsar-client and opentelemetry-sdk exactly (name==version)`,
    );
  }
  return pins;
}

const stepError = (step, code, message, hint) => {
  const error = new InteropSetupError(`step "${step}" failed: ${message}`, { code, hint });
  error.step = step;
  return error;
};

function findPython() {
  const python = process.env.BQ_INTEROP_PYTHON ?? 'python3';
  const probe = run(python, ['-c', 'import sys, venv, ensurepip; print("%d.%d.%d" % sys.version_info[:3])']);
  const install =
    'Install Python >= 3.9 with the venv module (Debian/Ubuntu: apt-get install python3 python3-venv; ' +
    'or pyenv/python.org), or point BQ_INTEROP_PYTHON at one.';
  if (probe.error) {
    throw new InteropSetupError(
      `the Python interop peer needs Python, but "${python}" cannot be run (${probe.error.code ?? probe.error.message})`,
      {
        code: 'PYTHON_MISSING',
        hint: install,
      },
    );
  }
  if (probe.status !== 0) {
    throw new InteropSetupError(`"${python}" has no working venv/ensurepip module:\n${probe.stderr.trim()}`, {
      code: 'PYTHON_MISSING',
      hint: install,
    });
  }
  const version = probe.stdout.trim();
  const [major, minor] = version.split('.').map(Number);
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    throw new InteropSetupError(`"${python}" is Python ${version}; the interop peer needs >= ${MIN_PYTHON.join('.')}`, {
      code: 'PYTHON_MISSING',
      hint: install,
    });
  }
  return { python, version };
}

const PINNED = ['babelqueue', 'pulsar-client', 'opentelemetry-sdk'];

/** The installed versions when the venv imports what the peer uses (the SDK's otel module too) at the pins. */
function verify(venvPython, pins) {
  const check = run(venvPython, [
    '-c',
    'import json, importlib.metadata as m, babelqueue.pulsar_transport, babelqueue.otel, pulsar, ' +
      'opentelemetry.sdk.trace.export.in_memory_span_exporter, babelqueue.gdpr, cryptography.hazmat.primitives.ciphers.aead; ' +
      `print(json.dumps({n: m.version(n) for n in ${JSON.stringify(PINNED)}}))`,
  ]);
  if (check.status !== 0) return null;
  const versions = JSON.parse(check.stdout.trim());
  return PINNED.every((name) => versions[name] === pins[name]) ? versions : null;
}

/**
 * Returns { sdk: 'python', python, peer, versions, venv, cached } once the venv is ready.
 * Throws InteropSetupError (code PYTHON_MISSING or PIP_FAILED) with what to install.
 */
export async function ensurePythonPeer() {
  const requirements = fs.readFileSync(requirementsFile, 'utf8');
  const pins = pythonPins(requirements);
  const base = findPython();
  const key = sha256(requirements, base.version).slice(0, 10);
  const venv = path.join(
    interopCacheDir(),
    `venv-py${base.version.split('.').slice(0, 2).join('.')}-babelqueue-${pins.babelqueue}-pulsar-client-${pins['pulsar-client']}-${key}`,
  );
  const venvPython = path.join(venv, 'bin', 'python');
  const marker = path.join(venv, '.bq-interop-ready');
  const describe = (versions, cached) => ({
    sdk: 'python',
    python: venvPython,
    peer: pythonPeerScript,
    versions,
    venv,
    cached,
  });

  if (fs.existsSync(marker)) {
    const versions = verify(venvPython, pins);
    if (versions) return describe(versions, true);
  }
  return withLock(`${venv}.lock`, async () => {
    if (fs.existsSync(marker)) {
      const versions = verify(venvPython, pins);
      if (versions) return describe(versions, true);
    }
    fs.rmSync(venv, { recursive: true, force: true });
    log(`creating ${venv} (Python ${base.version})`);
    const created = run(base.python, ['-m', 'venv', venv], { stdio: ['ignore', 'pipe', 'pipe'] });
    if (created.status !== 0) {
      throw new InteropSetupError(`python -m venv failed:\n${created.stderr.trim()}`, {
        code: 'PYTHON_MISSING',
        hint: 'Install the venv module (Debian/Ubuntu: apt-get install python3-venv).',
      });
    }
    log(
      `pip install -r ${path.relative(process.cwd(), requirementsFile)} (babelqueue[pulsar,otel]==${pins.babelqueue}, pulsar-client==${pins['pulsar-client']}, opentelemetry-sdk==${pins['opentelemetry-sdk']})`,
    );
    const pip = run(
      venvPython,
      [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--no-input',
        '--progress-bar',
        'off',
        '-r',
        requirementsFile,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (pip.status !== 0) {
      throw stepError(
        'pip install',
        'PIP_FAILED',
        `pip could not install the pinned Python SDK:\n${pip.stderr.trim().split('\n').slice(-15).join('\n')}`,
        'The interop suite needs PyPI (or a mirror via PIP_INDEX_URL) on the first run.',
      );
    }
    const versions = verify(venvPython, pins);
    if (!versions)
      throw stepError(
        'verify',
        'SETUP_FAILED',
        `the venv at ${venv} does not import babelqueue ${pins.babelqueue} (with babelqueue.otel) / pulsar-client ${pins['pulsar-client']} / opentelemetry-sdk ${pins['opentelemetry-sdk']}`,
      );
    fs.writeFileSync(marker, `${JSON.stringify(versions)}\n`);
    return describe(versions, false);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${JSON.stringify({ ok: true, ...(await ensurePythonPeer()) })}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.stdout.write(
      `${JSON.stringify({ ok: false, code: error.code ?? 'SETUP_FAILED', step: error.step ?? null, reason: error.message })}\n`,
    );
    process.exit(1);
  }
}
