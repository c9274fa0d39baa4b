// `babelqueue-pulsar schedules list|cancel|run-now`: the stored schedules (docs/scheduling.md), listed, cancelled
// or made due now. Talks to PostgreSQL only, never to the broker.
import { errorText } from '../envelope/error-text.js';
import type { OutboxPool } from '../outbox/relay-store.js';
import { cancelSchedule, listSchedules, runScheduleNow } from '../outbox/schedule-store.js';
import { DEFAULT_SCHEDULE_TABLE } from '../outbox/schedule-table.js';
import type { OutboxSqlRunner } from '../outbox/sql.js';
import { checkInstant } from '../schedule/index.js';
import { quoted, terminalJson } from '../text/untrusted-text.js';
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

export const SCHEDULES_USAGE = `usage: babelqueue-pulsar schedules list [--urn <urn>] [--before <time>] [--max <n>] [options]
       babelqueue-pulsar schedules cancel --id <schedule id>... [options]
       babelqueue-pulsar schedules run-now --id <schedule id>... [options]

list      pending schedules, soonest first: id, URN, next tick, cron and time zone, messages fired. Changes nothing.
cancel    the schedules with these ids never fire again (a message already in the outbox is not taken back).
run-now   the schedules with these ids are due now: the next dispatcher pass fires them (a recurring one then
          goes on from its expression).

  --id <id>              cancel, run-now: the schedule with this id (repeat for several)
  --urn <urn>            list: only schedules of this URN
  --before <time>        list: only schedules due at or before this ISO 8601 time
  --max <n>              list: at most n schedules (default 100)
  --table <name>         the schedule table (default ${DEFAULT_SCHEDULE_TABLE})
  --database-url <url>   postgres://…; default $BABELQUEUE_OUTBOX_DATABASE_URL, else $DATABASE_URL
  --json                 print the result as JSON
  -h, --help             this help

exit codes: 0 ok, 1 the query failed or an id was not pending, 2 usage error, 3 cannot reach the database`;

interface SchedulesRequest extends DatabaseSettings {
  action: 'list' | 'cancel' | 'run-now';
  ids: string[];
  urn?: string;
  before?: Date;
}

function parseSchedulesRequest(args: readonly string[], env: NodeJS.ProcessEnv): SchedulesRequest | 'help' {
  const parsed = parseDatabaseArgs(
    'schedules',
    args,
    ['list', 'cancel', 'run-now'] as const,
    {
      id: { type: 'string', multiple: true },
      urn: { type: 'string' },
      before: { type: 'string' },
    } as const,
  );
  if (parsed === 'help') return 'help';
  const { action, values } = parsed;
  const settings = databaseSettings(values, env, DEFAULT_SCHEDULE_TABLE);
  let before: Date | undefined;
  try {
    before = values.before === undefined ? undefined : checkInstant(values.before, '--before');
  } catch (error) {
    throw new UsageError(errorText(error));
  }
  const ids = (values.id ?? []).map((id) => id.trim());
  if (ids.some((id) => id === '')) throw new UsageError('--id must not be blank');
  if (action === 'list' && ids.length > 0) throw new UsageError('--id selects schedules to cancel or run now');
  if (action !== 'list' && ids.length === 0) throw new UsageError(`${action} needs --id <schedule id> (repeatable)`);
  if (action !== 'list' && (values.urn !== undefined || values.before !== undefined || values.max !== undefined)) {
    throw new UsageError('--urn, --before and --max narrow the list; cancel and run-now take --id');
  }
  const urn = values.urn?.trim();
  if (urn === '') throw new UsageError('--urn must not be blank');
  return {
    action,
    ...settings,
    ids,
    ...(urn !== undefined && { urn }),
    ...(before !== undefined && { before }),
  };
}

async function runAction(request: SchedulesRequest, runner: OutboxSqlRunner, output: Output): Promise<number> {
  if (request.action === 'list') {
    const schedules = await listSchedules(runner, request.table, {
      limit: request.max,
      ...(request.urn !== undefined && { urn: request.urn }),
      ...(request.before !== undefined && { before: request.before }),
    });
    if (request.json) {
      output.out(terminalJson(schedules, 2));
      return CODES.ok;
    }
    const now = Date.now();
    for (const schedule of schedules) {
      const next = schedule.nextTick!;
      const when =
        next.getTime() >= now ? `in ${formatAge(next.getTime() - now)}` : `due ${formatAge(now - next.getTime())} ago`;
      const recurring = schedule.cron === null ? '' : ` cron=${quoted(schedule.cron)} tz=${quoted(schedule.tz)}`;
      output.out(
        `${quoted(schedule.id)} urn=${quoted(schedule.urn)} next=${next.toISOString()} (${when})${recurring} fired=${schedule.fired}`,
      );
    }
    output.out(`${schedules.length} pending schedule(s) listed from ${request.table}`);
    return CODES.ok;
  }
  const act = request.action === 'cancel' ? cancelSchedule : runScheduleNow;
  const results: Record<string, boolean> = {};
  for (const id of request.ids) results[id] = await act(runner, request.table, id);
  if (request.json) output.out(terminalJson({ [request.action === 'cancel' ? 'cancelled' : 'due']: results }, 2));
  else {
    const done = request.action === 'cancel' ? 'cancelled' : 'due now';
    for (const [id, ok] of Object.entries(results)) {
      output.out(
        ok ? `${done} ${quoted(id)}` : `not pending ${quoted(id)} (no such schedule, or fired, cancelled, ended)`,
      );
    }
  }
  return Object.values(results).every(Boolean) ? CODES.ok : CODES.failed;
}

/** `babelqueue-pulsar schedules …`; resolves to the exit code. */
export function runSchedulesCli(args: readonly string[], output: Output, env: NodeJS.ProcessEnv): Promise<number> {
  return runDatabaseCommand(
    {
      name: 'schedules',
      usage: SCHEDULES_USAGE,
      parse: parseSchedulesRequest,
      // A pg Pool runs each statement on a connection of its own: every command here is one statement per id.
      run: (request, pool: OutboxPool, out) => runAction(request, pool as unknown as OutboxSqlRunner, out),
    },
    args,
    output,
    env,
  );
}
