// The help text of each `babelqueue-pulsar` verb (printed by --help with exit code 0, and after a usage error).

export const VERBS = ['list', 'peek', 'stats', 'purge', 'redrive'] as const;
export type Verb = (typeof VERBS)[number];

const SELECTORS = `  --topic <name>        the dead-letter topic, e.g. orders.dlq (required; it must exist: nothing is created)
  --reason <reason>     only records dead-lettered for this reason: failed, unknown_urn or poison
  --urn <urn>           only records with this URN
  --id <meta.id>        only the record with this meta.id (repeat for several)
  --message-id <id>     only the DLQ record with this message id, as printed: (ledger,entry,partition,batch)
  --older-than <age>    only records dead-lettered at least this long ago (90s, 15m, 2h, 7d)
  --newer-than <age>    only records dead-lettered at most this long ago
  --max <n>             read at most n records`;

const CONNECTION = `  --subscription <name> the DLQ subscription to read through (default babelqueue-redrive)
  --service-url <url>   pulsar:// (native client) or http:// (WebSocket); default $BABELQUEUE_PULSAR_SERVICE_URL
                        or pulsar://127.0.0.1:6650. A token is read from $BABELQUEUE_PULSAR_TOKEN.
  --admin-url <url>     the broker's admin API, asked whether the topic exists; default $BABELQUEUE_PULSAR_ADMIN_URL,
                        else the WebSocket URL, else the service URL's host on port 8080 (8443 for pulsar+ssl)
  --json                print the result as JSON
  -h, --help            this help`;

const EXIT_CODES = `exit codes: 0 ok, 1 a write (publish or acknowledge) failed, 2 usage error, 3 cannot reach the broker,
            4 the dead-letter topic does not exist`;

const HEADS: Record<Verb, string> = {
  list: `usage: babelqueue-pulsar list --topic <dlq topic> [selectors] [options]

One line per selected record: message id, meta.id, URN, reason, attempts, age, original queue, error, exception.
Reads without acknowledging: the DLQ is left as it was.`,
  peek: `usage: babelqueue-pulsar peek --topic <dlq topic> [selectors] [--limit <n>] [options]

The first selected record in full (body, properties, error), or the first n with --limit. Changes nothing.`,
  stats: `usage: babelqueue-pulsar stats --topic <dlq topic> [selectors] [options]

Counts of the selected records by URN and by reason, and the age of the oldest. Changes nothing.`,
  purge: `usage: babelqueue-pulsar purge --topic <dlq topic> [selectors] [--yes] [options]

Removes the selected records for good. A dry run (lists what would go) unless --yes is given. Only the selected
records are acknowledged; the others are not touched.`,
  redrive: `usage: babelqueue-pulsar redrive --topic <dlq topic> [selectors] [options]

Sends the selected records back to their queue, reset (attempts 0, no dead_letter block). A record that is not
redriven (not selected, not an envelope, naming no queue or a topic it may not go to) is put back at the end of the DLQ, so the next run
with --max moves on. Each record is acknowledged only after what replaces it was written.`,
};

const EXTRA: Record<Verb, string> = {
  list: '',
  peek: '\n  --limit <n>           show up to n selected records (default 1)',
  stats: '',
  purge:
    '\n  --yes                 remove the records (without it: a dry run)\n  --dry-run             the default; accepted for symmetry with redrive',
  redrive: `
  --to <name>           re-publish every record here instead of the topic each was consumed from
  --allow-target <name> a topic records may go back to (repeat for several); by default only <topic> for
                        <topic>.dlq: a record naming another one is refused and put back
  --dry-run             report what would happen; publish nothing, acknowledge nothing
  --bypass              stamp bq-replay-bypass: "1" so handlers can skip side effects`,
};

export function usage(verb: Verb): string {
  return `${HEADS[verb]}\n\n${SELECTORS}${EXTRA[verb]}\n${CONNECTION}\n\n${EXIT_CODES}`;
}

export const GENERAL_USAGE = `usage: babelqueue-pulsar <command> --topic <dlq topic> [options]

commands:
  list      the records of a dead-letter topic, one line each
  peek      a record in full: body, properties, error
  stats     counts by URN and reason
  purge     remove records (dry run unless --yes)
  redrive   send records back to their queue
  replay    re-deliver a subscription's messages from a time or a message id (dry run unless --yes)
  outbox    the transactional outbox's parked rows: outbox parked | outbox requeue (PostgreSQL, not the broker)
  schedules the stored schedules: schedules list | schedules cancel | schedules run-now (PostgreSQL)
  unblock   unblock a key of a running app (onExhausted 'block-key'), through its dashboard

babelqueue-pulsar <command> --help describes each one.
${EXIT_CODES}`;
