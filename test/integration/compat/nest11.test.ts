// NestJS 11 keeps working: the built package runs a microservice under Nest 11 against the real broker.
import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { uniqueTopic, webUrl } from '../../support/broker.js';
import { ownDependencies } from '../../support/own-dependencies.js';

jest.setTimeout(240_000);

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const NEST_11 = { '@nestjs/common': '11.2.10', '@nestjs/core': '11.2.10', '@nestjs/microservices': '11.2.6' };
const cacheRoot = process.env.BABELQUEUE_PULSAR_CACHE ?? path.join(os.homedir(), '.cache', 'babelqueue-nestjs-pulsar');

/** A folder with Nest 11 installed once (cached outside the clone) and this package's fresh build linked in. */
function prepare(): string {
  // The package's own dependencies are installed here too: the build is linked in, not installed. The folder is
  // named after them, so that a new dependency makes a new folder.
  const own = ownDependencies();
  const dependencies = { ...NEST_11, 'reflect-metadata': '0.2.2', rxjs: '7.8.2', ...own };
  const key = Object.entries(own)
    .map(([name, version]) => `${name}@${version}`)
    .join('+');
  const dir = path.join(cacheRoot, `nest11-${NEST_11['@nestjs/core']}-${key.replace(/[^\w.@+-]/g, '_')}`);
  if (!Object.keys(own).every((name) => fs.existsSync(path.join(dir, 'node_modules', name)))) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'nest11-compat', private: true, type: 'module', dependencies }),
    );
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, stdio: 'pipe' });
  }
  const target = path.join(dir, 'node_modules', '@babelqueue', 'nestjs-pulsar');
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(target, { recursive: true });
  // Both builds (dist/esm and dist/cjs), as npm run build makes them.
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), path.join(target, 'dist')], {
    stdio: 'pipe',
  });
  fs.copyFileSync(path.join(root, 'package.json'), path.join(target, 'package.json'));
  fs.copyFileSync(path.join(here, 'nest11-app.mjs'), path.join(dir, 'app.mjs'));
  return dir;
}

describe('NestJS 11 compatibility', () => {
  it('consumes, retries and acknowledges under Nest 11, and runs BabelQueueModule + BabelPulsarClient', () => {
    const dir = prepare();
    const topic = uniqueTopic('nest11');
    const output = execFileSync(process.execPath, ['app.mjs', webUrl(), topic, uniqueTopic('nest11-module')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = JSON.parse(output.trim().split('\n').pop()!);
    expect(result.nest).toBe(NEST_11['@nestjs/core']);
    expect(result.seen).toEqual([
      { data: { order_id: 11 }, attempts: 0, urn: 'urn:babel:orders:created' },
      { data: { order_id: 11 }, attempts: 1, urn: 'urn:babel:orders:created' },
    ]);
    expect(result.failure).toEqual({
      record: { attempts: 1, exception: 'BabelNonRetriableError', error: 'refused by the class interceptor' },
      exceptionHandlerLines: [],
      transportLines: 1,
    });
    expect(result.viaModule).toEqual([
      { data: { entry: 'nest 11' }, traceId: 'trace-11', queue: expect.stringMatching(/^nest11-module-/) },
    ]);
  });
});
