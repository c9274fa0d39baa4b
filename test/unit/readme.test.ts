// The README's TypeScript snippets: each is the exact, README-form copy of a test file that runs against the
// broker (test/integration/module/readme-snippets.test.ts), and, extracted from the Markdown, compiles against
// the built package.
import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readmeFormOf, readmeSnippets, root } from '../../scripts/lib/readme-snippets.mjs';

jest.setTimeout(180_000);

const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const snippets = readmeSnippets(readme);
const tsc = (args: string[]) =>
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: 'pipe',
  });

describe('README snippets', () => {
  it('has the quick start, forRootAsync, publishing and consuming examples', () => {
    const files = snippets.map((s) => path.basename(s.file));
    for (const file of [
      'app.module.ts',
      'app-async.module.ts',
      'orders.service.ts',
      'orders.controller.ts',
      'main.ts',
      'bootstrap.ts',
      'topology.module.ts',
    ]) {
      expect(files).toContain(file);
    }
    expect(readme).not.toMatch(/\.\.\/lib\/index\.js/);
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
    fs.writeFileSync(
      path.join(work, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        compilerOptions: {
          noEmit: true,
          rootDir: '.',
          types: ['node'],
          paths: { '@babelqueue/nestjs-pulsar': ['./dist/index.d.ts'], '@nestjs/config': ['./nestjs-config.d.ts'] },
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
