// `babelqueue-pulsar outbox parked|requeue`: the outbox rows the relay parked, listed and put back in the queue
// (docs/outbox.md#parked-rows). Talks to PostgreSQL only, never to the broker.
import { listParkedOutboxRows, requeueParkedOutboxRows } from '../outbox/parked.js';
import type { OutboxPool } from '../outbox/relay-store.js';
import { DEFAULT_OUTBOX_TABLE } from '../outbox/table.js';
import {
  CODES,
  databaseSettings,
  parseDatabaseArgs,
  runDatabaseCommand,
  UsageError,
  type DatabaseSettings,
  type Output,
} from './database-command.js';
import { formatAge } from './format.js';

export const OUTBOX_USAGE = `usage: babelqueue-pulsar outbox parked [--max <n>] [options]
       babelqueue-pulsar outbox requeue (--id <meta.id>... | --all) [--topic <topic>] [options]

parked    the rows the outbox relay gave up on (their own fault: not an envelope, a topic that cannot exist,
          too big), oldest first: meta.id, topic, attempts, age, the error that parked them. Changes nothing.
requeue   puts the selected parked rows back in the queue: pending, due now, a fresh attempt budget. Fix what
          parked them first, or they are parked again.

  --id <meta.id>         requeue: the row with this meta.id (repeat for several)
  --all                  requeue: every parked row (with --topic: every parked row of that topic)
  --topic <topic>        requeue: only rows of this topic, as it is written in the table
  --max <n>              parked: list at most n rows (default 100)
  --table <name>         the outbox table (default ${DEFAULT_OUTBOX_TABLE})
  --database-url <url>   postgres://…; default $BABELQUEUE_OUTBOX_DATABASE_URL, else $DATABASE_URL
  --json                 print the result as JSON
  -h, --help             this help

exit codes: 0 ok, 1 the query failed, 2 usage error, 3 cannot reach the database`;

interface OutboxRequest extends DatabaseSettings {
  action: 'parked' | 'requeue';
  ids?: string[];
  all: boolean;
  topic?: string;
}

function parseOutboxRequest(args: readonly string[], env: NodeJS.ProcessEnv): OutboxRequest | 'help' {
  const parsed = parseDatabaseArgs(
    'outbox',
    args,
    ['parked', 'requeue'] as const,
    {
      id: { type: 'string', multiple: true },
      all: { type: 'boolean' },
      topic: { type: 'string' },
    } as const,
  );
  if (parsed === 'help') return 'help';
  const { action, values } = parsed;
  const settings = databaseSettings(values, env, DEFAULT_OUTBOX_TABLE);
  const ids = values.id?.map((id) => id.trim());
  if (ids?.some((id) => id === '')) throw new UsageError('--id must not be blank');
  if (action === 'requeue' && (ids === undefined) === (values.all !== true)) {
    throw new UsageError('requeue needs --id <meta.id> (repeatable) or --all, not both');
  }
  if (action === 'parked' && (ids !== undefined || values.all || values.topic !== undefined)) {
    throw new UsageError('--id, --all and --topic select rows to requeue; parked lists them all');
  }
  const topic = values.topic?.trim();
  if (topic === '') throw new UsageError('--topic must not be blank');
  return {
    action,
    ...settings,
    ...(ids !== undefined && { ids }),
    all: values.all === true,
    ...(topic !== undefined && { topic }),
  };
}

async function runOutboxRequest(request: OutboxRequest, pool: OutboxPool, output: Output): Promise<number> {
  if (request.action === 'parked') {
    const listing = await listParkedOutboxRows(pool, { table: request.table, limit: request.max });
    if (request.json) output.out(JSON.stringify(listing, null, 2));
    else {
      const now = Date.now();
      for (const row of listing.rows) {
        output.out(
          `${row.messageId} topic=${row.topic} attempts=${row.attempts} ` +
            `parked=${formatAge(now - row.parkedAt.getTime())} ago error=${JSON.stringify(row.error ?? '')}`,
        );
      }
      output.out(`${listing.rows.length} of ${listing.total} parked row(s) in ${request.table}`);
    }
    return CODES.ok;
  }
  const ids = await requeueParkedOutboxRows(pool, {
    table: request.table,
    ...(request.ids !== undefined ? { ids: request.ids } : { all: true }),
    ...(request.topic !== undefined && { topic: request.topic }),
  });
  if (request.json) output.out(JSON.stringify({ requeued: ids }, null, 2));
  else {
    for (const id of ids) output.out(`requeued ${id}`);
    output.out(`${ids.length} parked row(s) requeued in ${request.table}`);
  }
  return CODES.ok;
}

/** `babelqueue-pulsar outbox …`; resolves to the exit code. */
export function runOutboxCli(args: readonly string[], output: Output, env: NodeJS.ProcessEnv): Promise<number> {
  return runDatabaseCommand(
    { name: 'outbox', usage: OUTBOX_USAGE, parse: parseOutboxRequest, run: runOutboxRequest },
    args,
    output,
    env,
  );
}
