#!/usr/bin/env node
// npm run bench: builds the library and runs every bench/*.bench.mjs in turn (figures are printed, not asserted).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = (args) => spawnSync(args[0], args.slice(1), { cwd: root, stdio: 'inherit' }).status ?? 1;

if (run(['npx', 'tsc', '-p', 'tsconfig.build.json']) !== 0) process.exit(1);
const only = process.argv[2];
const benches = fs
  .readdirSync(path.join(root, 'bench'))
  .filter((file) => file.endsWith('.bench.mjs') && (!only || file.includes(only)))
  .sort();
let status = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  status ||= run([process.execPath, '--expose-gc', path.join('bench', file)]);
}
process.exit(status);
