#!/usr/bin/env node
// npm run build: the package's two builds, ESM (dist/esm, for `import`) and CommonJS (dist/cjs, for `require`,
// e.g. a default Nest 11 CLI project under Jest + ts-jest), each with its own declarations. dist/cjs gets a
// package.json of {"type":"commonjs"} so Node reads its .js files as CommonJS under this "type":"module" package.
//
// `node scripts/build.mjs [outDir]` builds into another folder (tests build a copy of the package that way).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Builds both formats into `outDir` (default: dist/), replacing what was there. */
export function build(outDir = path.join(root, 'dist')) {
  fs.rmSync(outDir, { recursive: true, force: true });
  const formats = [
    ['tsconfig.build.json', 'esm', 'module'],
    ['tsconfig.build-cjs.json', 'cjs', 'commonjs'],
  ];
  for (const [project, folder, type] of formats) {
    const target = path.join(outDir, folder);
    const tsc = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, project), '--outDir', target],
      { cwd: root, stdio: 'inherit' },
    );
    if (tsc.status !== 0) throw new Error(`tsc -p ${project} failed (exit ${tsc.status})`);
    fs.writeFileSync(path.join(target, 'package.json'), `${JSON.stringify({ type })}\n`);
  }
  fs.chmodSync(path.join(outDir, 'esm', 'cli', 'babelqueue-pulsar.js'), 0o755);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    build(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
