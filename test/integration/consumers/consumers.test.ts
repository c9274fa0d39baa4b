// The packed package in the kinds of consumer project, each installed once in a cache folder outside the clone
// and run as its users run it:
// - CommonJS + Jest: the Nest 11 CLI's default project (its package.json with the `jest` block, tsconfig,
//   tsconfig.build.json and test/jest-e2e.json, as generated), which `require`s the package (dist/cjs);
// - ESM + Vitest: the Nest 12 CLI's default project (`"type": "module"`, nodenext, its vitest configs), which
//   `import`s it (dist/esm);
// - ESM + node --test: a Nest 12 project compiled with tsc and run by Node's own test runner.
// Each gets the README's quick start verbatim (src/app.module.ts, src/bootstrap.ts, src/main.ts) and runs an e2e
// test that publishes with BabelPulsarClient and waits for the @BabelHandler against the real broker. The two CLI
// projects also run the README's testing-kit test as src/orders.spec.ts with their default `npm test`
// configuration and no broker at the service URL (verbatim under Vitest; under Jest with the one import line the
// README says to change), build with their tsconfig.build.json, and start `node dist/main.js` until it is up.
import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readmeFormOf } from '../../../scripts/lib/readme-snippets.mjs';
import { onNative, serviceUrl, uniqueTopic } from '../../support/broker.js';
import { ownDependencies } from '../../support/own-dependencies.js';

jest.setTimeout(480_000);

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const cacheRoot = process.env.BABELQUEUE_PULSAR_CACHE ?? path.join(os.homedir(), '.cache', 'babelqueue-nestjs-pulsar');
const snippetsDir = path.join(root, 'test/integration/module/readme-snippets');
const QUICK_START = ['app.module.ts', 'bootstrap.ts', 'main.ts'];

/** Runs a command; returns its stdout and stderr (Jest reports on stderr), or throws with them on failure. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
    timeout: 300_000,
  });
  // Without colours: Vitest colours its summary even with FORCE_COLOR=0.
  const output = stripVTControlCharacters(`${result.stdout ?? ''}\n${result.stderr ?? ''}`);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (${result.status ?? result.signal}):\n${output}`);
  }
  return output;
}

/**
 * Starts a long-running process (an app's main), waits until its output matches `ready`, then stops it with
 * SIGTERM and waits for it to end; returns its output. Rejects when it ends first or is not ready in time.
 */
function runUntilReady(args: string[], cwd: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: 'pipe' });
    let output = '';
    let up = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} was not up within 60 s:\n${output}`));
    }, 60_000);
    const watch = (chunk: Buffer) => {
      output += chunk.toString();
      if (!up && ready.test(output)) {
        up = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.on('exit', () => {
      clearTimeout(timer);
      if (up) resolve(output);
      else reject(new Error(`${args.join(' ')} ended before it was up:\n${output}`));
    });
  });
}

/** Builds the package into a staging folder and `npm pack`s it there; returns the tarball. */
function pack(): string {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-pack-'));
  run(process.execPath, [path.join(root, 'scripts/build.mjs'), path.join(stage, 'dist')], root);
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) {
    fs.copyFileSync(path.join(root, file), path.join(stage, file));
  }
  run('npm', ['pack', '--ignore-scripts', '--silent'], stage);
  const name = fs.readdirSync(stage).find((file) => file.endsWith('.tgz'))!;
  return path.join(stage, name);
}

/**
 * A consumer project: installed once (keyed by its package.json), its sources and the packed package fresh. With
 * `readmeInstall`, the project is a fresh Nest CLI project (no @nestjs/microservices, nor this package) put back
 * to its first install each run, and the package comes in by the README's install lines for real (see
 * installAsTheReadmeSays); otherwise the tarball is unpacked where npm would put it.
 */
function project(
  kind: string,
  manifest: object,
  files: Record<string, string>,
  tarball: string,
  readmeInstall?: number,
): string {
  // Keyed by this clone too: two clones on one machine (worktrees) must not write their sources and packed package
  // into the same folder while the other one runs its tests there.
  const key = createHash('sha256').update(JSON.stringify(manifest)).update(root).digest('hex').slice(0, 12);
  const dir = path.join(cacheRoot, 'consumers', `${kind}-${key}`);
  const installed = path.join(dir, 'node_modules', '.installed');
  const fresh = path.join(dir, '.fresh');
  if (!fs.existsSync(installed)) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
    // The project as generated, before any install line: each run starts again from it.
    fs.mkdirSync(fresh, { recursive: true });
    for (const file of ['package.json', 'package-lock.json'])
      fs.copyFileSync(path.join(dir, file), path.join(fresh, file));
    fs.writeFileSync(installed, '');
  }
  for (const sub of ['src', 'test', 'dist']) fs.rmSync(path.join(dir, sub), { recursive: true, force: true });
  // An incremental build's record of a previous run would make tsc skip emitting into the fresh dist.
  for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.tsbuildinfo')))
    fs.rmSync(path.join(dir, file), { force: true });
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const target = path.join(dir, 'node_modules', '@babelqueue', 'nestjs-pulsar');
  const nativeLink = path.join(dir, 'node_modules', 'pulsar-client');
  if (readmeInstall !== undefined) {
    // Back to the fresh project: its manifest and lock file, and npm removes what the last run's lines added.
    for (const file of ['package.json', 'package-lock.json'])
      fs.copyFileSync(path.join(fresh, file), path.join(dir, file));
    fs.rmSync(nativeLink, { recursive: true, force: true });
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'], dir);
    expect(fs.existsSync(target)).toBe(false);
    installAsTheReadmeSays(dir, readmeInstall, tarball);
  } else {
    // The package as `npm install <tarball>` lays it out (its dependencies are in the manifest: COMMON).
    fs.rmSync(target, { recursive: true, force: true });
    fs.mkdirSync(target, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], dir);
    fs.rmSync(nativeLink, { recursive: true, force: true });
  }
  // The native client, when it is the one under test and the README's native line could not install it here (its
  // prebuilt binary is not reachable from every machine): the copy this clone built (scripts/lib/native-client.mjs).
  if (onNative() && !fs.existsSync(nativeLink))
    fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules', 'pulsar-client')), nativeLink);
  return dir;
}

/** How one README install line ended in a project. */
interface InstallRun {
  status: number | null;
  output: string;
}

/** Runs an install line as pasted (`npm i ...`), with this package's name replaced by the packed tarball. */
function runInstallLine(dir: string, packages: string[], tarball: string): InstallRun {
  const asPasted = packages.map((name) => (name === '@babelqueue/nestjs-pulsar' ? tarball : name));
  const result = spawnSync('npm', ['i', '--no-audit', '--no-fund', ...asPasted], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 300_000,
  });
  return { status: result.status, output: stripVTControlCharacters(`${result.stdout ?? ''}\n${result.stderr ?? ''}`) };
}

/**
 * The README's install lines for Nest `major`, for real, in a fresh project. The native line first: where
 * `pulsar-client` installs (its prebuilt binary downloaded or built), that is the install; where it cannot (no
 * route to archive.apache.org and no C++ headers, as on this project's CI), the line must fail at pulsar-client's
 * build and leave nothing installed, as the README says, and then the README's advice, the WebSocket-only line, must
 * install the package. Either way the package and @nestjs/microservices of that major are installed.
 */
function installAsTheReadmeSays(dir: string, major: number, tarball: string): void {
  const lines = readmeInstallLines();
  const manifestBefore = fs.readFileSync(path.join(dir, 'package.json'), 'utf8');
  const native = runInstallLine(dir, lines.get(`${major}:native`)!, tarball);
  const target = path.join(dir, 'node_modules', '@babelqueue', 'nestjs-pulsar');
  if (native.status === 0) {
    expect(fs.existsSync(path.join(dir, 'node_modules', 'pulsar-client', 'package.json'))).toBe(true);
  } else {
    // Only pulsar-client's own build failed (not a peer conflict or a missing package), and npm rolled back all.
    expect(native.output).toMatch(/pulsar-client/);
    expect(native.output).toMatch(/node-pre-gyp|gyp ERR!/);
    expect(native.output).not.toMatch(/ERESOLVE|E404/);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).toBe(manifestBefore);
    const webSocket = runInstallLine(dir, lines.get(`${major}:websocket`)!, tarball);
    if (webSocket.status !== 0) throw new Error(`the README's WebSocket-only line failed:\n${webSocket.output}`);
    expect(fs.existsSync(path.join(dir, 'node_modules', 'pulsar-client'))).toBe(false);
  }
  expect(fs.existsSync(path.join(target, 'dist', 'cjs', 'index.js'))).toBe(true);
  const microservices = JSON.parse(
    fs.readFileSync(path.join(dir, 'node_modules', '@nestjs', 'microservices', 'package.json'), 'utf8'),
  ) as { version: string };
  expect(microservices.version.split('.')[0]).toBe(String(major));
}

/** The README's quick-start files, as the README shows them. */
const quickStart = (): Record<string, string> =>
  Object.fromEntries(
    QUICK_START.map((file) => [`src/${file}`, readmeFormOf(fs.readFileSync(path.join(snippetsDir, file), 'utf8'))]),
  );

/** The e2e test every project runs; `ext` is how the project imports its own files ('' or '.js'). */
const e2eSpec = (ext: string, framework: string) => `${framework}
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BabelPulsarServer } from '@babelqueue/nestjs-pulsar';
import { AppModule, InvoicesService, OrdersService } from '../src/app.module${ext}';

describe('orders (e2e, real broker)', () => {
  it('handles the order it publishes', async () => {
    Logger.overrideLogger(false);
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer) });
    await app.listen();
    try {
      const id = await app.get(OrdersService).placeOrder({ id: 7, total: 42 }, 'trace-e2e');
      const invoices = app.get(InvoicesService);
      const deadline = Date.now() + 30_000;
      while (invoices.invoiced.get(7) !== 42) {
        if (Date.now() > deadline) throw new Error('the order was not handled within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      console.log('HANDLED ' + id + ' ' + require_or_import());
    } finally {
      await app.close();
    }
  });
});
`;

/** The README's testing-kit test, as the README shows it. */
const kitSpec = (): string => readmeFormOf(fs.readFileSync(path.join(snippetsDir, 'orders.kit.test.ts'), 'utf8'));

/** The one change the README asks for in a Nest 11 (Jest) project: its own file imported without `.js`. */
function kitSpecForJest(): string {
  const spec = kitSpec();
  const changed = spec.replace("from './app.module.js';", "from './app.module';");
  expect(changed).not.toBe(spec);
  return changed;
}

/** `node dist/main.js` logs this once the hybrid app of the quick start listens. */
const APP_UP = /Nest application successfully started/;

/** No broker listens here: a kit test that reached for one would fail. */
const NO_BROKER = { PULSAR_URL: 'pulsar://127.0.0.1:9', ORDERS_TOPIC: 'orders', FORCE_COLOR: '0' };

const NEST_12 = {
  '@nestjs/common': '12.1.1',
  '@nestjs/core': '12.1.1',
  '@nestjs/microservices': '12.1.1',
  '@nestjs/platform-express': '12.1.1',
  '@nestjs/testing': '12.1.1',
};
const COMMON = { 'reflect-metadata': '0.2.2', rxjs: '7.8.2', ...ownDependencies() };
const TS = { typescript: '5.9.3', '@types/node': '20.19.43' };

/** The Nest 11 and Nest 12 CLIs' tsconfig.build.json (what `nest build` compiles: src, no spec files). */
const tsconfigBuild = (rootDir: boolean) =>
  JSON.stringify({
    extends: './tsconfig.json',
    ...(rootDir && { compilerOptions: { rootDir: './src' }, include: ['src'] }),
    exclude: ['node_modules', 'test', 'dist', '**/*spec.ts'],
  });

/** The README's quick start built as `nest build` builds it, started as `node dist/main.js`, then stopped. */
async function buildAndStart(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], dir);
  const output = await runUntilReady(['dist/main.js'], dir, { ...env, PORT: '0' }, APP_UP);
  expect(output).not.toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
}

/** The README's install lines (`npm i <packages>   # Nest 12, native ...`): the packages of each, by `major:client`. */
function readmeInstallLines(): Map<string, string[]> {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const install = /## Install\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const lines = new Map<string, string[]>();
  for (const [, packages, major, client] of install.matchAll(
    /^npm i (.+?)\s+# Nest (\d+), (native Pulsar client|WebSocket client only)$/gm,
  ))
    lines.set(`${major}:${client!.startsWith('native') ? 'native' : 'websocket'}`, packages!.trim().split(/\s+/));
  return lines;
}

/** The README's test of an app whose publisher is replaced: no broker, and no pulsar-client after the WebSocket line. */
const overrideSpec = (ext: string) => `import { Test } from '@nestjs/testing';
import { BabelPulsarClient } from '@babelqueue/nestjs-pulsar';
import { AppModule } from './app.module${ext}';

describe('the app with its publisher replaced', () => {
  it('starts and closes with the default pulsar:// URL, without a broker', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(BabelPulsarClient)
      .useValue({ publish: async () => 'id' })
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await app.close();
  });
});
`;

/**
 * A fresh Nest CLI project of `major`: its dependencies as the CLI writes them (`^<major>.0.x` ranges, no
 * @nestjs/microservices: the install line adds it), `@nestjs/testing` among its dev dependencies. npm gives a
 * project made today the newest release of each, and the install line the newest @nestjs/microservices of the
 * major, which may need that newest @nestjs/core: so the project is keyed by it (`latest`), installed again when
 * Nest publishes one, as a project made that day would be.
 */
function freshCliProject(major: 11 | 12) {
  const range = major === 11 ? '^11.0.1' : '^12.0.0';
  const latest = JSON.parse(run('npm', ['view', `@nestjs/core@${range}`, 'version', '--json'], root).trim()) as
    string | string[];
  return {
    dependencies: {
      '@nestjs/common': range,
      '@nestjs/core': range,
      '@nestjs/platform-express': range,
      'reflect-metadata': COMMON['reflect-metadata'],
      rxjs: COMMON.rxjs,
    },
    testing: { '@nestjs/testing': range },
    latest: Array.isArray(latest) ? latest[latest.length - 1]! : latest,
  };
}

describe('consumer projects (packed package)', () => {
  let tarball: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    tarball = pack();
    env = { PULSAR_URL: serviceUrl(), ORDERS_TOPIC: uniqueTopic('consumer'), FORCE_COLOR: '0' };
  });

  afterAll(() => {
    if (tarball) fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
  });

  it('the README has an install line per Nest major and client, in the form the projects below run', () => {
    const lines = readmeInstallLines();
    expect([...lines.keys()].sort()).toEqual(['11:native', '11:websocket', '12:native', '12:websocket']);
    for (const major of [11, 12]) {
      expect(lines.get(`${major}:native`)).toEqual([
        '@babelqueue/nestjs-pulsar',
        `@nestjs/microservices@^${major}`,
        'pulsar-client',
      ]);
      expect(lines.get(`${major}:websocket`)).toEqual(['@babelqueue/nestjs-pulsar', `@nestjs/microservices@^${major}`]);
    }
  });

  it('CommonJS + Jest: the Nest 11 CLI default project runs the quick start, its kit test and an e2e test', async () => {
    // The Nest 11 CLI's ts template (@nestjs/schematics 11.1): its test tooling and Jest configuration, as generated.
    const fresh = freshCliProject(11);
    const manifest = {
      name: 'consumer-cjs',
      private: true,
      scripts: { test: 'jest', 'test:e2e': 'jest --config ./test/jest-e2e.json' },
      dependencies: fresh.dependencies,
      devDependencies: {
        ...fresh.testing,
        ...TS,
        jest: '30.5.2',
        'ts-jest': '29.4.15',
        '@types/jest': '30.0.0',
      },
      jest: {
        moduleFileExtensions: ['js', 'json', 'ts'],
        rootDir: 'src',
        testRegex: '.*\\.spec\\.ts$',
        transform: { '^.+\\.(t|j)s$': 'ts-jest' },
        collectCoverageFrom: ['**/*.(t|j)s'],
        coverageDirectory: '../coverage',
        testEnvironment: 'node',
      },
    };
    const dir = project(
      `cjs-nest${fresh.latest}`,
      manifest,
      {
        ...quickStart(),
        'src/orders.spec.ts': kitSpecForJest(),
        'src/override.spec.ts': overrideSpec(''),
        // The Nest 11 CLI's tsconfig (no "type" in package.json: nodenext emits CommonJS).
        'tsconfig.json': JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            resolvePackageJsonExports: true,
            esModuleInterop: true,
            isolatedModules: true,
            declaration: true,
            removeComments: true,
            emitDecoratorMetadata: true,
            experimentalDecorators: true,
            allowSyntheticDefaultImports: true,
            target: 'ES2023',
            sourceMap: true,
            outDir: './dist',
            baseUrl: './',
            incremental: true,
            skipLibCheck: true,
            strictNullChecks: true,
            forceConsistentCasingInFileNames: true,
            noImplicitAny: false,
            strictBindCallApply: false,
            noFallthroughCasesInSwitch: false,
          },
        }),
        'tsconfig.build.json': tsconfigBuild(false),
        // The Nest 11 CLI's test/jest-e2e.json, as generated (no moduleNameMapper).
        'test/jest-e2e.json': JSON.stringify({
          moduleFileExtensions: ['js', 'json', 'ts'],
          rootDir: '.',
          testEnvironment: 'node',
          testRegex: '.e2e-spec.ts$',
          transform: { '^.+\\.(t|j)s$': 'ts-jest' },
        }),
        'test/orders.e2e-spec.ts': e2eSpec(
          '',
          "const require_or_import = () => require.resolve('@babelqueue/nestjs-pulsar');",
        ),
      },
      tarball,
      11,
    );
    // The shipped source maps carry their sources: a stack trace or a debugger resolves lib/*.ts without them.
    for (const build of ['cjs', 'esm']) {
      const map = path.join(
        dir,
        'node_modules/@babelqueue/nestjs-pulsar/dist',
        build,
        'nest/client/babel-pulsar.client.js.map',
      );
      const { sourcesContent } = JSON.parse(fs.readFileSync(map, 'utf8')) as { sourcesContent?: string[] };
      expect(sourcesContent?.[0]).toContain('export class BabelPulsarClient');
    }
    const jestBin = 'node_modules/jest/bin/jest.js';
    // `npm test`: the package.json configuration, src/**/*.spec.ts, no broker.
    expect(run(process.execPath, [jestBin], dir, NO_BROKER)).toMatch(/Tests:\s+2 passed, 2 total/);
    const output = run(process.execPath, [jestBin, '--config', './test/jest-e2e.json'], dir, env);
    expect(output).toMatch(/HANDLED [0-9a-f-]{36} .*dist\/cjs\/index\.js/);
    await buildAndStart(dir, env);
  });

  it('ESM: a Nest 12 project ("type": "module", module nodenext) imports it and handles a message', () => {
    const manifest = {
      name: 'consumer-esm',
      private: true,
      type: 'module',
      dependencies: { ...NEST_12, ...COMMON },
      devDependencies: { ...TS },
    };
    const dir = project(
      'esm-nest12',
      manifest,
      {
        ...quickStart(),
        'tsconfig.json': JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'ES2023',
            emitDecoratorMetadata: true,
            experimentalDecorators: true,
            strictNullChecks: true,
            skipLibCheck: true,
            types: ['node'],
            outDir: './dist',
            rootDir: '.',
          },
          include: ['src', 'test'],
        }),
        'test/orders.e2e.test.ts': e2eSpec(
          '.js',
          "import { describe, it } from 'node:test';\n" +
            "const require_or_import = () => import.meta.resolve('@babelqueue/nestjs-pulsar');",
        ),
      },
      tarball,
    );
    run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], dir);
    const output = run(process.execPath, ['--test', '--test-reporter=spec', 'dist/test/orders.e2e.test.js'], dir, env);
    expect(output).toMatch(/HANDLED [0-9a-f-]{36} .*dist\/esm\/index\.js/);
  });

  it('ESM + Vitest: the Nest 12 CLI default project runs the quick start, the kit test verbatim and an e2e test', async () => {
    // The Nest 12 CLI's ts-esm template: its test dependencies and configuration, as generated.
    const fresh = freshCliProject(12);
    const manifest = {
      name: 'consumer-vitest',
      private: true,
      type: 'module',
      scripts: { test: 'vitest run', 'test:e2e': 'vitest run --config ./vitest.config.e2e.ts' },
      dependencies: fresh.dependencies,
      devDependencies: {
        ...fresh.testing,
        '@types/node': '^24.0.0',
        typescript: '^6.0.2',
        'vite-tsconfig-paths': '^5.1.4',
        vitest: '^4.1.2',
      },
    };
    const vitestConfig = (include: string) =>
      [
        "import { defineConfig } from 'vitest/config';",
        "import tsconfigPaths from 'vite-tsconfig-paths';",
        '',
        'export default defineConfig({',
        '  plugins: [tsconfigPaths()],',
        `  test: { globals: true, root: './', include: ['${include}'] },`,
        '});',
        '',
      ].join('\n');
    const dir = project(
      `vitest-nest${fresh.latest}`,
      manifest,
      {
        ...quickStart(),
        'src/orders.spec.ts': kitSpec(),
        'src/override.spec.ts': overrideSpec('.js'),
        'tsconfig.json': JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            resolvePackageJsonExports: true,
            esModuleInterop: true,
            isolatedModules: true,
            declaration: true,
            removeComments: true,
            emitDecoratorMetadata: true,
            experimentalDecorators: true,
            allowSyntheticDefaultImports: true,
            target: 'ES2023',
            sourceMap: true,
            outDir: './dist',
            rootDir: '.',
            incremental: true,
            skipLibCheck: true,
            strict: false,
            strictPropertyInitialization: false,
            types: ['vitest/globals', 'node'],
          },
        }),
        'tsconfig.build.json': tsconfigBuild(true),
        'vitest.config.ts': vitestConfig('**/*.spec.ts'),
        'vitest.config.e2e.ts': vitestConfig('**/*.e2e-spec.ts'),
        'test/orders.e2e-spec.ts': e2eSpec('.js', "const require_or_import = () => 'esm';"),
      },
      tarball,
      12,
    );
    const vitest = 'node_modules/vitest/vitest.mjs';
    // `npm test`: vitest.config.ts, **/*.spec.ts, no broker.
    expect(run(process.execPath, [vitest, 'run'], dir, NO_BROKER)).toMatch(/Tests\s+2 passed \(2\)/);
    const output = run(process.execPath, [vitest, 'run', '--config', './vitest.config.e2e.ts'], dir, env);
    expect(output).toMatch(/HANDLED [0-9a-f-]{36} esm/);
    // The whole project type-checks as the editor sees it (the spec's `.js` import included).
    run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit'], dir);
    await buildAndStart(dir, env);
  });
});
