// The user's pages (README.md and docs/*.md): their TypeScript snippets are the exact, README-form copies of test
// files that run (test/integration/module/readme-snippets.test.ts and the kit's orders.kit.test.ts) and, extracted
// from the Markdown, compile against the built package; the README is a short guide that links every page; no page
// points at things a user cannot follow.
import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { allSnippets, docFiles, readmeFormOf, root } from '../../scripts/lib/readme-snippets.mjs';

jest.setTimeout(180_000);

const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const pages = docFiles().map((page) => ({ page, text: fs.readFileSync(path.join(root, page), 'utf8') }));
const snippets = allSnippets();
const tsc = (args: string[]) =>
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: 'pipe',
  });

/** GitHub's anchor of a heading. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

const headingsOf = (text: string): Set<string> =>
  new Set(
    [...text.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.*)$/gm)].map(([, heading]) => anchorOf(heading!)),
  );

describe('the README and docs/', () => {
  it("carries this repository's two commands, the test one exactly as .ci/run runs it", () => {
    const ciRun = fs.readFileSync(path.join(root, '.ci/run'), 'utf8');
    const commands = ciRun.split('\n').filter((line) => /^npm /.test(line.trim()));
    expect(commands).toEqual(['npm ci && npm test']);
    expect(ciRun).toContain("the README's test command");
    const operations = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
    for (const command of [commands[0]!, 'npm ci && npm run demo']) {
      expect(readme).toContain(`\`${command}\``);
      expect(operations).toContain(command);
    }
  });

  it('the README is a guide of at most 300 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(300);
    for (const section of ['## Install', '## Choosing a client', '## Quick start', '## Testing', '## More'])
      expect(readme).toContain(section);
  });

  it('links every page of docs/', () => {
    for (const { page } of pages.filter(({ page }) => page.startsWith('docs/'))) expect(readme).toContain(`](${page})`);
  });

  it.each(pages.map(({ page, text }) => [page, text]))('%s has no internal references', (_page, text) => {
    const internal = /Decision D\d+|\bD\d{1,2}\b|§\s?\d|contract §|the issue|issue #?\d+|ADR-\d+/g;
    expect(text.match(internal) ?? []).toEqual([]);
  });

  it.each(pages.map(({ page, text }) => [page, text]))(
    '%s links only to pages and headings that exist',
    (page, text) => {
      const broken: string[] = [];
      for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s:]*)(?:#([\w-]+))?\)/g)) {
        const file = target ? path.join(path.dirname(path.join(root, page)), target) : path.join(root, page);
        if (!fs.existsSync(file)) broken.push(`${target}#${anchor ?? ''}`);
        else if (anchor && file.endsWith('.md') && !headingsOf(fs.readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${target}#${anchor}`);
      }
      expect(broken).toEqual([]);
    },
  );
});

describe('README snippets', () => {
  it('has the quick start, forRootAsync, publishing, consuming and testing examples', () => {
    const files = snippets.map((s) => path.basename(s.file));
    for (const file of [
      'app.module.ts',
      'app-async.module.ts',
      'main.ts',
      'bootstrap.ts',
      'topology.module.ts',
      'orders.kit.test.ts',
    ]) {
      expect(files).toContain(file);
    }
    for (const { text } of pages) expect(text).not.toMatch(/\.\.\/lib\/(testing\/)?index\.js/);
  });

  it.each(snippets.map((s) => [s.file, s.code]))(
    '%s is shown exactly as tested (npm run readme re-renders it)',
    (file, code) => {
      expect(code).toBe(readmeFormOf(fs.readFileSync(path.join(root, file), 'utf8')).replace(/\n?$/, '\n'));
    },
  );

  it('compiles, as extracted from the Markdown, against the built package', () => {
    const work = path.join(root, 'test-results', 'readme-snippets');
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(path.join(work, 'src'), { recursive: true });
    tsc(['-p', 'tsconfig.build.json', '--outDir', path.join(work, 'dist')]);
    for (const { file, code } of snippets) fs.writeFileSync(path.join(work, 'src', path.basename(file)), code);
    // @nestjs/config is not a dependency here: a declaration of the surface the snippet uses stands in for it.
    fs.writeFileSync(
      path.join(work, 'nestjs-config.d.ts'),
      'export declare class ConfigService { get<T = string>(key: string, defaultValue?: T): T | undefined; getOrThrow<T = string>(key: string): T; }\n' +
        "export declare class ConfigModule { static forRoot(): import('@nestjs/common').DynamicModule; }\n",
    );
    // Nor is @nestjs/terminus: the part of its surface the health snippet uses.
    fs.writeFileSync(
      path.join(work, 'nestjs-terminus.d.ts'),
      'export declare class HealthCheckService { check(indicators: Array<() => unknown>): Promise<unknown>; }\n' +
        'export declare function HealthCheck(): MethodDecorator;\n',
    );
    fs.writeFileSync(
      path.join(work, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        compilerOptions: {
          noEmit: true,
          rootDir: '.',
          types: ['node', 'jest'],
          paths: {
            '@babelqueue/nestjs-pulsar': ['./dist/index.d.ts'],
            '@babelqueue/nestjs-pulsar/*': ['./dist/*/index.d.ts'],
            '@nestjs/config': ['./nestjs-config.d.ts'],
            '@nestjs/terminus': ['./nestjs-terminus.d.ts'],
          },
        },
        include: ['src'],
      }),
    );
    const compile = (): string => {
      try {
        return tsc(['-p', path.join(work, 'tsconfig.json')]);
      } catch (error) {
        return String((error as { stdout?: string }).stdout ?? error);
      }
    };
    expect(compile()).toBe('');
  });
});
