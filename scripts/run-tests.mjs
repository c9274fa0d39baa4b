#!/usr/bin/env node
// npm test entry: runs the Jest projects named on the command line (default: all that have tests)
// and ends with the plain summary line "N passed, N failed" counted from Jest's JSON results.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const all = ['unit', 'conformance', 'integration', 'chaos', 'interop'];
const separator = process.argv.indexOf('--');
const named = process.argv.slice(2, separator === -1 ? undefined : separator);
const passThrough = separator === -1 ? [] : process.argv.slice(separator + 1);

const hasTests = (dir) =>
  fs.existsSync(dir) && fs.readdirSync(dir, { recursive: true }).some((file) => String(file).endsWith('.test.ts'));
const projects = (named.length ? named : all).filter((name) => {
  if (!all.includes(name)) throw new Error(`unknown test project "${name}" (known: ${all.join(', ')})`);
  return hasTests(path.join(root, 'test', name));
});
if (projects.length === 0) {
  console.error('no test files found for the selected projects');
  process.exit(1);
}

// A full run (no project named) also checks types, lint and formatting; each failing check counts as a failure.
const staticChecks = named.length
  ? []
  : [
      ['typecheck', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']],
      ['lint', ['node_modules/eslint/bin/eslint.js', '.']],
      ['format', ['node_modules/prettier/bin/prettier.cjs', '--check', '.']],
    ];
let staticPassed = 0;
let staticFailed = 0;
for (const [name, args] of staticChecks) {
  const check = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (check.status === 0) staticPassed += 1;
  else staticFailed += 1;
  console.log(`[${name}] ${check.status === 0 ? 'ok' : 'FAILED'}`);
}

const resultsFile = path.join(root, 'test-results', 'jest.json');
fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
fs.rmSync(resultsFile, { force: true });
const jest = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--no-warnings=ExperimentalWarning',
    path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--selectProjects',
    ...projects,
    '--json',
    `--outputFile=${resultsFile}`,
    ...passThrough,
  ],
  { cwd: root, stdio: 'inherit' },
);

let passed = staticPassed;
let failed = staticFailed;
if (fs.existsSync(resultsFile)) {
  const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
  passed += results.numPassedTests;
  // A suite that fails to load has no failed tests of its own; count it so the line cannot read clean.
  failed += results.numFailedTests + results.numRuntimeErrorTestSuites;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(jest.status === 0 && failed === 0 ? 0 : 1);
