// The option tables of docs/configuration.md, rendered from the option tables in lib/ (each entry's JSDoc and its
// @defaultValue tag), between `<!-- options: <table> -->` and `<!-- /options -->` markers.
import fs from 'node:fs';
import path from 'node:path';
import prettier from 'prettier';
import ts from 'typescript';
import { root } from './readme-snippets.mjs';

/** Each rendered table: which declared tables it lists, in order, with a prefix for nested options. */
const TABLES = {
  module: [{ file: 'lib/nest/module/module-options.ts', table: 'moduleOptionTable', expand: { consumer: 'consumer' } }],
  consumer: [{ file: 'lib/nest/options/consumer-options.ts', table: 'consumerOptions', prefix: 'consumer.' }],
  handler: [{ file: 'lib/nest/options/handler-options.ts', table: 'handlerOptionTable' }],
  client: [{ file: 'lib/nest/client/client-options.ts', table: 'clientOptionTable' }],
  outboxRelay: [{ file: 'lib/outbox/relay-options.ts', table: 'outboxRelayOptionTable' }],
  scheduleDispatcher: [{ file: 'lib/outbox/schedule-dispatcher-options.ts', table: 'scheduleDispatcherOptionTable' }],
};

function tableLiteral(file, name) {
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(path.join(root, file), 'utf8'),
    ts.ScriptTarget.ES2022,
    true,
  );
  let found;
  source.forEachChild(function visit(node) {
    if (ts.isVariableDeclaration(node) && node.name.getText() === name && node.initializer) found = node.initializer;
    else node.forEachChild(visit);
  });
  if (!found || !ts.isObjectLiteralExpression(found)) throw new Error(`${file}: no object literal ${name}`);
  return found;
}

/** A JSDoc comment as one Markdown line: `docs/x.md#y` mentions become links relative to docs/. */
function markdownOf(text) {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\]\(docs\//g, '](')
    .replace(/(?<![\w/])docs\/([\w-]+\.md(?:#[\w-]+)?)/g, '[$1]($1)')
    .replace(/\|/g, '\\|')
    .trim();
}

/** The file of lib/nest that declares `name` (a table spread into another). */
function declaringFile(name) {
  const folder = path.join(root, 'lib', 'nest');
  const file = fs
    .readdirSync(folder, { recursive: true })
    .map(String)
    .find(
      (entry) =>
        entry.endsWith('.ts') && new RegExp(`const ${name} =`).test(fs.readFileSync(path.join(folder, entry), 'utf8')),
    );
  if (!file) throw new Error(`no declaration of ${name} in lib/nest`);
  return `lib/nest/${file.split(path.sep).join('/')}`;
}

function rowsOf({ file, table, prefix = '', expand = {} }) {
  const rows = [];
  for (const property of tableLiteral(file, table).properties) {
    if (ts.isSpreadAssignment(property) && ts.isIdentifier(property.expression)) {
      const name = property.expression.text;
      rows.push(...rowsOf({ file: declaringFile(name), table: name, prefix }));
      continue;
    }
    if (!ts.isPropertyAssignment(property)) continue;
    const key = property.name.getText();
    if (expand[key]) {
      rows.push(...TABLES[expand[key]].flatMap(rowsOf));
      continue;
    }
    const [doc] = ts.getJSDocCommentsAndTags(property).filter(ts.isJSDoc);
    const text =
      typeof doc?.comment === 'string' ? doc.comment : (doc?.comment ?? []).map((part) => part.text).join('');
    const fallback = (doc?.tags ?? []).find((tag) => tag.tagName.text === 'defaultValue');
    const shown = typeof fallback?.comment === 'string' ? fallback.comment : '';
    rows.push(`| \`${prefix}${key}\` | ${markdownOf(shown) || '—'} | ${markdownOf(text)} |`);
  }
  return rows;
}

export function renderTable(name) {
  return ['| option | default | what it does |', '| --- | --- | --- |', ...TABLES[name].flatMap(rowsOf)].join('\n');
}

const MARKERS = /(<!-- options: (\w+) -->\n)[\s\S]*?(\n<!-- \/options -->)/g;

/** The page with every marked table rendered again (the table formatted as the repository's Prettier does). */
export async function renderOptionTables(page) {
  const file = path.join(root, page);
  const text = fs.readFileSync(file, 'utf8');
  const config = { ...((await prettier.resolveConfig(file)) ?? {}), parser: 'markdown' };
  const tables = new Map();
  for (const [, , name] of text.matchAll(MARKERS))
    tables.set(name, (await prettier.format(renderTable(name), config)).trimEnd());
  return text.replace(MARKERS, (_all, open, name, close) => `${open}\n${tables.get(name)}\n${close}`);
}

export const OPTION_PAGES = ['docs/configuration.md', 'docs/outbox.md', 'docs/scheduling.md'];
