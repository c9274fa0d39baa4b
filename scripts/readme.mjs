#!/usr/bin/env node
// npm run readme: re-renders the code snippets of README.md and docs/*.md from the test files they are copied from,
// and the option tables of the docs from the option tables in lib/.
import fs from 'node:fs';
import path from 'node:path';
import { docFiles, renderReadme, root } from './lib/readme-snippets.mjs';
import { OPTION_PAGES, renderOptionTables } from './lib/option-tables.mjs';

let changed = 0;
for (const page of docFiles()) {
  const file = path.join(root, page);
  const before = fs.readFileSync(file, 'utf8');
  const after = renderReadme(before);
  if (before !== after) {
    fs.writeFileSync(file, after);
    changed += 1;
  }
}
console.log(changed === 0 ? 'snippets already up to date' : `snippets re-rendered in ${changed} page(s)`);
for (const page of OPTION_PAGES) {
  const file = path.join(root, page);
  const before = fs.readFileSync(file, 'utf8');
  const after = await renderOptionTables(page);
  if (before !== after) fs.writeFileSync(file, after);
  console.log(before === after ? `${page}: option tables already up to date` : `${page}: option tables rendered`);
}
