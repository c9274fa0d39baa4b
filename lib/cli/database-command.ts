// What the CLI commands that talk to PostgreSQL only (`outbox`, `schedules`) share: the database URL, table and
// --max settings, opening a pg Pool, and turning what fails into an exit code.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorText } from '../envelope/error-text.js';
import type { OutboxPool } from '../outbox/relay-store.js';
import { checkOutboxTable } from '../outbox/table.js';

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const CODES = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

/** A command line that cannot be run: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** The parseArgs options every database command takes. */
export const DATABASE_OPTIONS = {
  max: { type: 'string' },
  table: { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface DatabaseSettings {
  databaseUrl: string;
  table: string;
  max: number;
  json: boolean;
}

/** The database URL (option, else the environment), the table (checked) and --max (default 100). */
export function databaseSettings(
  values: { max?: string; table?: string; 'database-url'?: string; json?: boolean },
  env: NodeJS.ProcessEnv,
  defaultTable: string,
): DatabaseSettings {
  const databaseUrl = values['database-url'] ?? env.BABELQUEUE_OUTBOX_DATABASE_URL ?? env.DATABASE_URL;
  if (!databaseUrl?.trim()) {
    throw new UsageError('no database: pass --database-url or set BABELQUEUE_OUTBOX_DATABASE_URL or DATABASE_URL');
  }
  let table: string;
  try {
    table = checkOutboxTable(values.table ?? defaultTable, '--table');
  } catch (error) {
    throw new UsageError(errorText(error));
  }
  const max = values.max === undefined ? 100 : Number(values.max);
  if (!/^\s*[0-9]+\s*$/.test(values.max ?? '1') || max < 1) {
    throw new UsageError(`--max must be a positive whole number, got ${JSON.stringify(values.max)}`);
  }
  return { databaseUrl: databaseUrl.trim(), table, max, json: values.json === true };
}

/** What parseArgs reads with a command's own options and DATABASE_OPTIONS. */
type ParsedValues<O extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ options: O & typeof DATABASE_OPTIONS; strict: true; allowPositionals: false }>
>['values'];

/**
 * Reads `<action> [options]`: 'help' when asked for, a UsageError for an action not in `actions` or an option
 * not in `options` (the command's own) or DATABASE_OPTIONS.
 */
export function parseDatabaseArgs<A extends string, O extends NonNullable<ParseArgsConfig['options']>>(
  name: string,
  args: readonly string[],
  actions: readonly A[],
  options: O,
): 'help' | { action: A; values: ParsedValues<O> } {
  const [action, ...rest] = args;
  if (action === undefined || action === '--help' || action === '-h' || action === 'help') return 'help';
  if (!(actions as readonly string[]).includes(action)) {
    const known = `${actions.slice(0, -1).join(', ')} or ${actions.at(-1)}`;
    throw new UsageError(`unknown ${name} command ${JSON.stringify(action)} (${known})`);
  }
  const { values } = parseArgs({
    args: rest,
    strict: true,
    allowPositionals: false,
    options: { ...options, ...DATABASE_OPTIONS },
  }) as { values: ParsedValues<O> };
  return (values as { help?: boolean }).help ? 'help' : { action: action as A, values };
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

/** A database command: how to read its arguments, and what to do with a pool once they are read. */
export interface DatabaseCommand<R extends DatabaseSettings & { action: string }> {
  /** `outbox`, `schedules`: how its messages start. */
  name: string;
  usage: string;
  /** The request, `help`, or a UsageError. */
  parse(args: readonly string[], env: NodeJS.ProcessEnv): R | 'help';
  /** Runs the request on the pool (one connection); resolves to the exit code. */
  run(request: R, pool: OutboxPool, output: Output): Promise<number>;
}

/** Parses, opens the pool, runs, and says what failed: 2 for a usage error, 3 when the database cannot be reached. */
export async function runDatabaseCommand<R extends DatabaseSettings & { action: string }>(
  command: DatabaseCommand<R>,
  args: readonly string[],
  output: Output,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const prefix = `babelqueue-pulsar ${command.name}`;
  let request: R | 'help';
  try {
    request = command.parse(args, env);
  } catch (error) {
    output.err(`${prefix}: ${errorText(error)}\n\n${command.usage}`);
    return CODES.usage;
  }
  if (request === 'help') {
    output.out(command.usage);
    return CODES.ok;
  }
  let pool: Awaited<ReturnType<typeof openPool>>;
  try {
    pool = await openPool(request.databaseUrl);
  } catch (error) {
    output.err(`${prefix}: the pg package is needed (npm install pg): ${errorText(error)}`);
    return CODES.failed;
  }
  try {
    return await command.run(request, pool, output);
  } catch (error) {
    const text = errorText(error);
    if (unreachable(error)) {
      output.err(`${prefix} ${request.action}: cannot reach the database: ${text}`);
      return CODES.unreachable;
    }
    output.err(`${prefix} ${request.action}: ${text}`);
    return CODES.failed;
  } finally {
    await pool.end().catch(() => undefined);
  }
}
