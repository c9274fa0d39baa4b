// The public surface of every entry point is recorded in api/<entry>.api.md (API Extractor): a change of what the
// package exports fails here until `npm run api-report` writes the new report, so the change shows in review.
import fs from 'node:fs';
import path from 'node:path';
import { jest } from '@jest/globals';
import { buildDeclarations, checkApiReports, entryPoints } from '../../scripts/lib/api-report.mjs';
import { root } from '../../scripts/lib/readme-snippets.mjs';
import * as publicApi from '../../lib/index.js';

jest.setTimeout(180_000);

describe('the public API', () => {
  it('matches api/*.api.md for every entry point (npm run api-report updates them)', () => {
    const declarations = path.join(root, 'test-results', 'api-dts-check');
    buildDeclarations(declarations);
    expect(checkApiReports({ update: false, declarations })).toEqual([]);
  });

  it('keeps the root entry point to what an application writes: at most 70 names, types included', () => {
    expect(entryPoints().map(({ name }) => name)).toContain('testing');
    const report = fs.readFileSync(path.join(root, 'api', 'index.api.md'), 'utf8');
    const names = [
      ...report.matchAll(/^export (?:declare )?(?:abstract )?(?:class|function|const|interface|type|enum) (\w+)/gm),
    ];
    expect(names.length).toBeGreaterThan(Object.keys(publicApi).length);
    expect(names.length).toBeLessThanOrEqual(70);
  });
});
