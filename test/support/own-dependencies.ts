// The package's own dependencies at the versions this clone installed: what a project that lays the built package
// out by hand (instead of `npm install <tarball>`) must install beside it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

export function ownDependencies(): Record<string, string> {
  const { dependencies } = readJson<{ dependencies: Record<string, string> }>(path.join(root, 'package.json'));
  return Object.fromEntries(
    Object.keys(dependencies).map((name) => [
      name,
      readJson<{ version: string }>(path.join(root, 'node_modules', name, 'package.json')).version,
    ]),
  );
}
