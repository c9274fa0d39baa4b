// The public surface of each entry point of the package, as API Extractor reports it (api/<entry>.api.md).
// `node scripts/api-report.mjs` writes the reports; the unit test runs the same check in CI mode, so a change of
// the public surface fails until its report is updated (and reviewed) with it.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { root } from './readme-snippets.mjs';

/** Every entry point of package.json's `exports`, by its report name. */
export function entryPoints() {
  const { exports } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([subpath, target]) => ({
      name: subpath === '.' ? 'index' : subpath.slice(2),
      types: target.import.types.replace('./dist/esm/', ''),
    }));
}

/** Declarations of lib/ into `outDir` (what the reports are computed from). */
export function buildDeclarations(outDir) {
  fs.rmSync(outDir, { recursive: true, force: true });
  const tsc = spawnSync(
    process.execPath,
    [
      path.join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(root, 'tsconfig.build.json'),
      '--emitDeclarationOnly',
      '--declarationMap',
      'false',
      '--outDir',
      outDir,
    ],
    { cwd: root, encoding: 'utf8' },
  );
  if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
}

/**
 * Runs API Extractor on every entry point. `update`: writes api/*.api.md; otherwise compares and returns the
 * entries whose surface differs from their report.
 */
export function checkApiReports({ update, declarations }) {
  const changed = [];
  for (const entry of entryPoints()) {
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: root,
        mainEntryPointFilePath: path.join(declarations, entry.types),
        compiler: { tsconfigFilePath: path.join(root, 'tsconfig.build.json') },
        apiReport: {
          enabled: true,
          reportFolder: path.join(root, 'api'),
          reportTempFolder: path.join(declarations, 'api-temp'),
          reportFileName: `${entry.name}.api.md`,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          compilerMessageReporting: { default: { logLevel: 'none' } },
          extractorMessageReporting: {
            default: { logLevel: 'none' },
            'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          },
          tsdocMessageReporting: { default: { logLevel: 'none' } },
        },
      },
      configObjectFullPath: path.join(root, 'api', 'api-extractor.json'),
      packageJsonFullPath: path.join(root, 'package.json'),
    });
    const result = Extractor.invoke(config, {
      localBuild: update,
      messageCallback: (message) => (message.handled = true),
    });
    if (!update && result.apiReportChanged) changed.push(entry.name);
  }
  return changed;
}
