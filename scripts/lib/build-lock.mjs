// A lock between processes for a step that must run once at a time (building the native client into a shared
// cache folder): a directory created atomically, holding the owner's pid. A lock whose owner died is taken over.
// Synchronous, like the build it guards.
import fs from 'node:fs';
import path from 'node:path';

const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function ownerAlive(lockDir) {
  let pid;
  try {
    pid = Number(fs.readFileSync(path.join(lockDir, 'owner'), 'utf8'));
  } catch {
    // Created but not written yet (its owner is between mkdir and write), or removed meanwhile.
    const stat = fs.statSync(lockDir, { throwIfNoEntry: false });
    return stat !== undefined && Date.now() - stat.mtimeMs < 10_000;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Runs `action` while holding the lock `lockDir`; waits (up to `timeoutMs`) while another live process holds it.
 * `onWait` is told once when this process has to wait.
 */
export function withDirLock(lockDir, action, { timeoutMs = 30 * 60_000, pollMs = 200, onWait } = {}) {
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'owner'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (!ownerAlive(lockDir)) {
        // Its owner died mid-build: take it over (a rename, so that two takers cannot both remove a fresh lock).
        const stale = `${lockDir}.stale-${process.pid}`;
        try {
          fs.renameSync(lockDir, stale);
          fs.rmSync(stale, { recursive: true, force: true });
        } catch {
          // another process took it over first
        }
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${lockDir}`, { cause: error });
      }
      if (!told) onWait?.();
      told = true;
      pause(pollMs);
    }
  }
  try {
    return action();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
