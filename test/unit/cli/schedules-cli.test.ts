// `babelqueue-pulsar schedules …`: what is refused before anything connects (the verbs themselves run against the
// real PostgreSQL in test/integration/outbox/schedules.test.ts).
import { runCli } from '../../../lib/cli/run-cli.js';
import { GENERAL_USAGE } from '../../../lib/cli/usage.js';

async function run(args: string[], env: NodeJS.ProcessEnv = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

it('the general help names the schedules verbs', () => {
  expect(GENERAL_USAGE).toMatch(
    /schedules +the stored schedules: schedules list \| schedules cancel \| schedules run-now/,
  );
});

it.each([
  [['schedules']],
  [['schedules', '--help']],
  [['schedules', 'list', '--help']],
  [['schedules', 'cancel', '-h']],
])('%j prints the help, exit 0', async (args) => {
  const result = await run(args);
  expect(result.code).toBe(0);
  expect(result.out).toMatch(/^usage: babelqueue-pulsar schedules list/);
});

it.each([
  [['schedules', 'delete'], /unknown schedules command "delete" \(list, cancel or run-now\)/],
  [['schedules', 'list', '--nope'], /Unknown option '--nope'/],
  [['schedules', 'cancel'], /cancel needs --id <schedule id> \(repeatable\)/],
  [['schedules', 'run-now'], /run-now needs --id/],
  [['schedules', 'cancel', '--id', ' '], /--id must not be blank/],
  [['schedules', 'list', '--id', 'a'], /--id selects schedules to cancel or run now/],
  [['schedules', 'cancel', '--id', 'a', '--urn', 'urn:x'], /--urn, --before and --max narrow the list/],
  [['schedules', 'list', '--before', 'tomorrow'], /--before must be a Date, epoch milliseconds or an ISO 8601 time/],
  [['schedules', 'list', '--max', '0'], /--max must be a positive whole number/],
  [['schedules', 'list', '--table', 'drop table x'], /--table must be a plain SQL identifier/],
])('%j is a usage error, exit 2', async (args, message) => {
  const result = await run(args);
  expect(result.code).toBe(2);
  expect(result.err).toMatch(message);
});

it('without a database URL it says where one comes from, exit 2', async () => {
  const result = await run(['schedules', 'list'], {});
  expect(result.code).toBe(2);
  expect(result.err).toMatch(/no database: pass --database-url or set BABELQUEUE_OUTBOX_DATABASE_URL or DATABASE_URL/);
});

it('a database that cannot be reached is exit 3', async () => {
  const result = await run(['schedules', 'list']);
  expect(result.code).toBe(3);
  expect(result.err).toMatch(/schedules list: cannot reach the database/);
});
