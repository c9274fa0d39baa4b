#!/usr/bin/env node
// npm run api-report: writes api/<entry>.api.md, the public surface of each entry point of the package.
import path from 'node:path';
import { buildDeclarations, checkApiReports } from './lib/api-report.mjs';
import { root } from './lib/readme-snippets.mjs';

const declarations = path.join(root, 'test-results', 'api-dts');
buildDeclarations(declarations);
checkApiReports({ update: true, declarations });
console.log('api/*.api.md written: review the diff, it is the change of the public surface');
