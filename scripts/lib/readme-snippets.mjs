// The code examples of README.md and docs/*.md are copies of test files that the test suite runs. Each is marked
// as <!-- snippet: <path> --> ```ts ... ``` <!-- /snippet -->; this module renders them from the files.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MARKED = /<!-- snippet: (\S+) -->\n```ts\n([\s\S]*?)```\n<!-- \/snippet -->/g;

/** A test file as the README shows it: the package's public import names, without the test-only header. */
export function readmeFormOf(source) {
  const lines = source.split('\n');
  while (lines[0]?.startsWith('// README snippet') || lines[0]?.startsWith('// (The README')) lines.shift();
  return lines
    .join('\n')
    .replace(/'(\.\.\/)+lib\/index\.js'/g, "'@babelqueue/nestjs-pulsar'")
    .replace(/'(\.\.\/)+lib\/(\w+)\/index\.js'/g, "'@babelqueue/nestjs-pulsar/$2'")
    .replace(/'\.\/config\.js'/g, "'@nestjs/config'")
    .replace(/'\.\/terminus\.js'/g, "'@nestjs/terminus'");
}

/** Every marked snippet: its source file and the code the README shows for it. */
export function readmeSnippets(readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')) {
  return [...readme.matchAll(MARKED)].map(([, file, code]) => ({ file, code }));
}

/** README.md with every marked snippet re-rendered from its file. */
export function renderReadme(readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')) {
  return readme.replace(MARKED, (_all, file) => {
    const code = readmeFormOf(fs.readFileSync(path.join(root, file), 'utf8'));
    return `<!-- snippet: ${file} -->\n\`\`\`ts\n${code.endsWith('\n') ? code : `${code}\n`}\`\`\`\n<!-- /snippet -->`;
  });
}

/** The pages a user reads: README.md, then docs/*.md (paths relative to the repository). */
export function docFiles() {
  const docs = fs.existsSync(path.join(root, 'docs'))
    ? fs
        .readdirSync(path.join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => `docs/${name}`)
    : [];
  return ['README.md', ...docs];
}

/** Every marked snippet of every page, with the page it is on. */
export function allSnippets() {
  return docFiles().flatMap((page) =>
    readmeSnippets(fs.readFileSync(path.join(root, page), 'utf8')).map((snippet) => ({ page, ...snippet })),
  );
}
