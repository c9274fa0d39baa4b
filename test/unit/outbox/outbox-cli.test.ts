// `babelqueue-pulsar outbox …`: what is refused before anything connects (the verbs themselves run against the
// real PostgreSQL in test/integration/outbox/parking.test.ts).
import { runCli } from '../../../lib/cli/run-cli.js';
import { GENERAL_USAGE } from '../../../lib/cli/usage.js';

async function run(args: string[], env: NodeJS.ProcessEnv = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

it('the general help names the outbox verbs', () => {
  expect(GENERAL_USAGE).toMatch(/outbox +the transactional outbox's parked rows/);
});

it.each([[['outbox']], [['outbox', '--help']], [['outbox', 'parked', '--help']], [['outbox', 'requeue', '-h']]])(
  '%j prints the help, exit 0',
  async (args) => {
    const result = await run(args);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^usage: babelqueue-pulsar outbox parked/);
  },
);

it.each([
  [['outbox', 'list'], /unknown outbox command "list"/],
  [['outbox', 'parked', '--nope'], /Unknown option '--nope'/],
  [['outbox', 'requeue'], /requeue needs --id <meta.id> \(repeatable\) or --all, not both/],
  [['outbox', 'requeue', '--all', '--id', 'a'], /not both/],
  [['outbox', 'requeue', '--id', ' '], /--id must not be blank/],
  [['outbox', 'requeue', '--all', '--topic', ' '], /--topic must not be blank/],
  [['outbox', 'parked', '--all'], /select rows to requeue/],
  [['outbox', 'parked', '--max', '0'], /--max must be a positive whole number/],
  [['outbox', 'parked', '--max', 'x'], /--max must be a positive whole number/],
  [['outbox', 'parked', '--table', 'drop table x'], /--table must be a plain SQL identifier/],
])('%j is a usage error, exit 2', async (args, message) => {
  const result = await run(args);
  expect(result.code).toBe(2);
  expect(result.err).toMatch(message);
});

it('needs a database', async () => {
  const result = await run(['outbox', 'parked'], {});
  expect(result.code).toBe(2);
  expect(result.err).toMatch(/pass --database-url or set BABELQUEUE_OUTBOX_DATABASE_URL or DATABASE_URL/);
});
