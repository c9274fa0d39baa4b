// The CLI with a pulsar:// service URL where pulsar-client is not installed: one line saying what to do, and the
// usage exit code (nothing was read), not "a write failed". Told before anything is asked of a broker.
import { EXIT, runCli } from '../../../lib/cli/run-cli.js';

const missing = () =>
  Promise.reject(
    Object.assign(new Error("Cannot find package 'pulsar-client' imported from /app/node_modules/x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    }),
  );

it('says to install pulsar-client or use the WebSocket URL, and exits with the usage code', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    ['list', '--topic', 'orders.dlq', '--service-url', 'pulsar://127.0.0.1:1'],
    { out: (line) => out.push(line), err: (line) => err.push(line) },
    {},
    { loadNative: missing },
  );
  expect(code).toBe(EXIT.usage);
  expect(out).toEqual([]);
  expect(err).toEqual([
    'babelqueue-pulsar list: the service URL pulsar://127.0.0.1:1 needs the native Pulsar client, but "pulsar-client" ' +
      'is not installed: run "npm install pulsar-client", or pass --service-url http://<broker>:8080 (the built-in ' +
      'WebSocket client, on the web service port)',
  ]);
});
