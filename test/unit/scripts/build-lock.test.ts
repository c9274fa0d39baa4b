// The lock that makes `npm run native:setup` safe when several run at once (two terminals, parallel CI jobs): real
// processes contend for it, and only one at a time runs the guarded step; a lock left by a process that died is
// taken over.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const lockModule = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/lib/build-lock.mjs');

/** A process that takes the lock, writes `enter <pid>`, holds it a while, writes `exit <pid>`. */
function contender(lockDir: string, logFile: string): Promise<number | null> {
  const script = `
    import fs from 'node:fs';
    import { withDirLock } from ${JSON.stringify(lockModule)};
    const note = (what) => fs.appendFileSync(${JSON.stringify(logFile)}, what + ' ' + process.pid + '\\n');
    withDirLock(${JSON.stringify(lockDir)}, () => {
      note('enter');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
      note('exit');
    }, { pollMs: 20 });
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    child.once('close', resolve);
  });
}

describe('withDirLock', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-build-lock-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lets one process at a time run the step', async () => {
    const lockDir = path.join(dir, 'build.lock');
    const logFile = path.join(dir, 'log');
    const codes = await Promise.all([1, 2, 3, 4].map(() => contender(lockDir, logFile)));
    expect(codes).toEqual([0, 0, 0, 0]);
    const lines = fs.readFileSync(logFile, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(8);
    for (let i = 0; i < lines.length; i += 2) {
      const pid = lines[i]!.split(' ')[1];
      expect([lines[i], lines[i + 1]]).toEqual([`enter ${pid}`, `exit ${pid}`]);
    }
    expect(fs.existsSync(lockDir)).toBe(false);
  });

  it('takes over a lock whose owner died', async () => {
    const lockDir = path.join(dir, 'build.lock');
    const logFile = path.join(dir, 'log');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    fs.mkdirSync(lockDir);
    fs.writeFileSync(path.join(lockDir, 'owner'), gone.stdout);
    expect(await contender(lockDir, logFile)).toBe(0);
    expect(fs.readFileSync(logFile, 'utf8')).toMatch(/^enter \d+\nexit \d+\n$/);
  });
});
