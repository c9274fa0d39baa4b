// Without pulsar-client installed (the WebSocket-only install line) and the quick start's default pulsar:// URL:
// the module compiles (a test that overrides BabelPulsarClient, or never listens, runs), and listen() and the
// first publish fail saying what to install. Run in a child process whose pulsar-client import fails.
import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

jest.setTimeout(60_000);

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../../..');

/** The environment without the quick start's two variables, so that it uses its defaults. */
function defaultsOfTheQuickStart(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.PULSAR_URL;
  delete env.ORDERS_TOPIC;
  return env;
}

it('compiles and closes (the client never created), then listen() and publish() say to install pulsar-client or use an http:// URL', () => {
  const output = execFileSync(
    process.execPath,
    [
      '--import',
      './scripts/lib/ts/register.mjs',
      '--import',
      './test/unit/nest/module/without-native/hide-pulsar-client.mjs',
      path.join(here, 'without-native/app.ts'),
    ],
    { cwd: root, encoding: 'utf8', env: defaultsOfTheQuickStart() },
  );
  const steps = Object.fromEntries(
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { step: string; outcome: string })
      .map(({ step, outcome }) => [step, outcome]),
  );
  expect(steps.compile).toBe('ok');
  expect(steps.idle).toBe('never created');
  expect(steps.listen).toMatch(
    /^BabelPulsarServer could not start \(pulsar:\/\/localhost:6650, native pulsar-client\): .*the package "pulsar-client" is not installed: run "npm install pulsar-client", or use an http\(s\):\/\/ or ws\(s\):\/\/ serviceUrl/,
  );
  expect(steps.publish).toMatch(/the package "pulsar-client" is not installed/);
});
