#!/usr/bin/env node
// npm run readme: re-renders the README's code snippets from the test files they are copied from.
import fs from 'node:fs';
import path from 'node:path';
import { renderReadme, root } from './lib/readme-snippets.mjs';

const file = path.join(root, 'README.md');
const before = fs.readFileSync(file, 'utf8');
const after = renderReadme(before);
fs.writeFileSync(file, after);
console.log(before === after ? 'README snippets already up to date' : 'README snippets re-rendered');
