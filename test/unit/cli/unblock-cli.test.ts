// `babelqueue-pulsar unblock`: usage errors (exit 2) before anything is called, and the call itself against a
// local HTTP server standing in for the dashboard (the real app: test/integration/dashboard/unblock.test.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli } from '../../../lib/cli/run-cli.js';
import { GENERAL_USAGE } from '../../../lib/cli/usage.js';

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const target = ['--topic', 'orders', '--subscription', 'babelqueue', '--key', 'acct 7'];

it('the general help names the verb; --help prints its own, exit 0', async () => {
  expect(GENERAL_USAGE).toMatch(/unblock +unblock a key of a running app/);
  const help = await run(['unblock', '--help']);
  expect(help.code).toBe(0);
  expect(help.out).toMatch(/^usage: babelqueue-pulsar unblock --url/);
});

it.each([
  [['unblock', ...target], /--url is required/],
  [['unblock', '--url', 'ftp://app', ...target], /--url must be an http:\/\/ or https:\/\/ URL/],
  [['unblock', '--url', 'http://app', '--topic', 'orders', '--subscription', 's'], /--key is required/],
  [['unblock', '--url', 'http://app', '--subscription', 's', '--key', 'k'], /--topic is required/],
  [['unblock', '--url', 'http://app', '--topic', 't', '--key', 'k'], /--subscription is required/],
  [['unblock', '--url', 'http://app', ...target, '--header', 'no colon'], /--header must be "name: value"/],
  [['unblock', '--url', 'http://app', ...target, '--nope'], /Unknown option '--nope'/],
])('%j is a usage error, exit 2', async (args, message) => {
  const result = await run(args);
  expect(result.code).toBe(2);
  expect(result.err).toMatch(message);
});

describe('against a dashboard', () => {
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders; body: unknown }> = [];
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        const body = JSON.parse(text) as { key: string };
        seen.push({ url: request.url ?? '', headers: request.headers, body });
        const blocked = body.key === 'acct 7';
        response.writeHead(blocked ? 201 : 400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(
            blocked
              ? { unblocked: true, key: body.key, settled: [{ action: 'dead-letter' }] }
              : { statusCode: 400, message: `unblock(): key "${body.key}" is not blocked; blocked: none` },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/babelqueue/`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('posts the subscription and key as JSON with the token and headers given, exit 0', async () => {
    const result = await run(['unblock', '--url', base, ...target, '--header', 'x-operator: yes'], {
      BABELQUEUE_DASHBOARD_TOKEN: 't0k',
    });
    expect(result.code).toBe(0);
    expect(result.out).toBe(
      'unblocked key "acct 7" on orders (subscription babelqueue): its message was dead-lettered and the key goes on',
    );
    expect(seen.at(-1)).toMatchObject({
      url: '/babelqueue/api/subscriptions/unblock',
      headers: { authorization: 'Bearer t0k', 'x-operator': 'yes', 'content-type': 'application/json' },
      body: { topic: 'orders', subscription: 'babelqueue', key: 'acct 7' },
    });
    const json = await run(['unblock', '--url', base, ...target, '--json']);
    expect(JSON.parse(json.out)).toMatchObject({ unblocked: true, settled: [{ action: 'dead-letter' }] });
  });

  it("reports the app's refusal, exit 1, and an app it cannot reach, exit 3", async () => {
    const refused = await run(['unblock', '--url', base, ...target.slice(0, 4), '--key', 'other']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/the app answered HTTP 400: unblock\(\): key "other" is not blocked/);
    const closed = await run(['unblock', '--url', 'http://127.0.0.1:1/babelqueue', ...target]);
    expect(closed.code).toBe(3);
    expect(closed.err).toMatch(
      /cannot reach the app at http:\/\/127\.0\.0\.1:1\/babelqueue\/api\/subscriptions\/unblock/,
    );
  });
});
