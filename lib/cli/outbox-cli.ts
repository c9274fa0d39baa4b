// `babelqueue-pulsar outbox parked|requeue`: the outbox rows the relay parked, listed and put back in the queue
// (docs/outbox.md#parked-rows). Talks to PostgreSQL only, never to the broker.
import { parseArgs } from 'node:util';
import { errorText } from '../envelope/error-text.js';
import { listParkedOutboxRows, requeueParkedOutboxRows } from '../outbox/parked.js';
import type { OutboxPool } from '../outbox/relay-store.js';
import { checkOutboxTable, DEFAULT_OUTBOX_TABLE } from '../outbox/table.js';
import { formatAge } from './format.js';

interface Output {
  out(line: string): void;
  err(line: string): void;
}

const CODES = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

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

class UsageError extends Error {}

interface OutboxRequest {
  action: 'parked' | 'requeue';
  table: string;
  databaseUrl: string;
  max: number;
  ids?: string[];
  all: boolean;
  topic?: string;
  json: boolean;
}

function parseOutboxRequest(args: readonly string[], env: NodeJS.ProcessEnv): OutboxRequest | 'help' {
  const [action, ...rest] = args;
  if (action === undefined || action === '--help' || action === '-h' || action === 'help') return 'help';
  if (action !== 'parked' && action !== 'requeue') {
    throw new UsageError(`unknown outbox command ${JSON.stringify(action)} (parked or requeue)`);
  }
  const { values } = parseArgs({
    args: [...rest],
    strict: true,
    allowPositionals: false,
    options: {
      id: { type: 'string', multiple: true },
      all: { type: 'boolean' },
      topic: { type: 'string' },
      max: { type: 'string' },
      table: { type: 'string' },
      'database-url': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const databaseUrl = values['database-url'] ?? env.BABELQUEUE_OUTBOX_DATABASE_URL ?? env.DATABASE_URL;
  if (!databaseUrl?.trim()) {
    throw new UsageError('no database: pass --database-url or set BABELQUEUE_OUTBOX_DATABASE_URL or DATABASE_URL');
  }
  let table: string;
  try {
    table = checkOutboxTable(values.table ?? DEFAULT_OUTBOX_TABLE, '--table');
  } catch (error) {
    throw new UsageError(errorText(error));
  }
  const max = values.max === undefined ? 100 : Number(values.max);
  if (!/^\s*[0-9]+\s*$/.test(values.max ?? '1') || max < 1) {
    throw new UsageError(`--max must be a positive whole number, got ${JSON.stringify(values.max)}`);
  }
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
    table,
    databaseUrl: databaseUrl.trim(),
    max,
    ...(ids !== undefined && { ids }),
    all: values.all === true,
    ...(topic !== undefined && { topic }),
    json: values.json === true,
  };
}

/** A connection refused, a host not found, a server that does not answer: the database is not reachable. */
export const unreachable = (error: unknown): boolean =>
  /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|timeout/i.test(
    `${errorText(error)} ${String((error as { code?: unknown } | null)?.code ?? '')}`,
  );

export async function openPool(url: string): Promise<OutboxPool & { end(): Promise<void> }> {
  const imported = (await import('pg')) as unknown as {
    default?: { Pool: new (config: object) => OutboxPool & { end(): Promise<void> } };
    Pool?: new (config: object) => OutboxPool & { end(): Promise<void> };
  };
  const Pool = imported.Pool ?? imported.default?.Pool;
  if (!Pool) throw new Error('the pg package has no Pool');
  return new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
}

/** `babelqueue-pulsar outbox …`; resolves to the exit code. */
export async function runOutboxCli(args: readonly string[], output: Output, env: NodeJS.ProcessEnv): Promise<number> {
  let request: OutboxRequest | 'help';
  try {
    request = parseOutboxRequest(args, env);
  } catch (error) {
    output.err(`babelqueue-pulsar outbox: ${errorText(error)}\n\n${OUTBOX_USAGE}`);
    return CODES.usage;
  }
  if (request === 'help') {
    output.out(OUTBOX_USAGE);
    return CODES.ok;
  }
  let pool: Awaited<ReturnType<typeof openPool>>;
  try {
    pool = await openPool(request.databaseUrl);
  } catch (error) {
    output.err(`babelqueue-pulsar outbox: the pg package is needed (npm install pg): ${errorText(error)}`);
    return CODES.failed;
  }
  try {
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
  } catch (error) {
    const text = errorText(error);
    if (unreachable(error)) {
      output.err(`babelqueue-pulsar outbox ${request.action}: cannot reach the database: ${text}`);
      return CODES.unreachable;
    }
    output.err(`babelqueue-pulsar outbox ${request.action}: ${text}`);
    return CODES.failed;
  } finally {
    await pool.end().catch(() => undefined);
  }
}
