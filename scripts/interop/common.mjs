// Shared helpers of the interop peer setup: the cache location (outside the clone), a cross-process
// lock (Jest runs test files in parallel workers) and content hashes for cache keys.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const peersDir = path.join(repoRoot, 'test', 'interop', 'peers');

/** ~/.cache/babelqueue-nestjs-pulsar/interop (same base as the broker cache; BABELQUEUE_PULSAR_CACHE overrides). */
export function interopCacheDir(env = process.env) {
  const base =
    env.BABELQUEUE_PULSAR_CACHE ??
    path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'babelqueue-nestjs-pulsar');
  return path.join(base, 'interop');
}

export const log = (message) => process.stderr.write(`[interop] ${message}\n`);

export function sha256(...parts) {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

/** Runs a command; returns { status, stdout, stderr, error } without throwing. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', error: result.error };
}

/** A setup step that cannot succeed on this machine; `hint` says what to install or do. */
export class InteropSetupError extends Error {
  constructor(message, { code, hint, details } = {}) {
    super(hint ? `${message}\n${hint}` : message);
    this.name = 'InteropSetupError';
    this.code = code ?? 'SETUP_FAILED';
    this.details = details ?? '';
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` while holding a lock directory (mkdir is atomic). A lock older than `staleMs` is taken
 * over (a crashed setup must not block every later run).
 */
export async function withLock(lockDir, fn, { staleMs = 15 * 60_000, waitMs = 20 * 60_000 } = {}) {
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let age;
      try {
        age = Date.now() - fs.statSync(lockDir).mtimeMs;
      } catch {
        continue;
      }
      if (age > staleMs) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new InteropSetupError(`timed out waiting for the setup lock ${lockDir}`);
      await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
