import { parseArgs } from 'node:util';
import { BabelQueueRedrive } from '../redrive/babel-queue-redrive.js';
import type { RedriveItem, RedriveOptions, RedriveResult } from '../redrive/types.js';

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `usage: babelqueue-pulsar redrive --topic <dlq topic> [options]

  --topic <name>        the dead-letter topic, e.g. orders.dlq (required)
  --to <name>           re-publish here instead of each record's dead_letter.original_queue
  --reason <reason>     only records dead-lettered for this reason (failed, unknown_urn)
  --urn <urn>           only records with this URN
  --id <meta.id>        only the record with this meta.id (repeat for several)
  --max <n>             read at most n records
  --dry-run             report what would happen; publish nothing, acknowledge nothing
  --bypass              stamp bq-replay-bypass: "1" so handlers can skip side effects
  --subscription <name> the DLQ subscription to read through (default babelqueue-redrive)
  --service-url <url>   pulsar:// (native client) or http:// (WebSocket); default $BABELQUEUE_PULSAR_SERVICE_URL
                        or pulsar://127.0.0.1:6650. A token is read from $BABELQUEUE_PULSAR_TOKEN.
  --json                print the final report as JSON`;

const DEFAULT_SERVICE_URL = 'pulsar://127.0.0.1:6650';

/** `babelqueue-pulsar <command> ...`; resolves to the process exit code (0 ok, 1 a publish failed, 2 usage). */
export async function runCli(
  argv: readonly string[],
  output: CliOutput = consoleOutput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'redrive') {
    output.err(command === undefined || command === '--help' ? USAGE : `unknown command ${command}\n${USAGE}`);
    return command === '--help' ? 0 : 2;
  }
  let parsed: { options: RedriveOptions; serviceUrl: string; json: boolean };
  try {
    parsed = parseRedriveArgs(rest, env);
  } catch (error) {
    output.err(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  const token = env.BABELQUEUE_PULSAR_TOKEN;
  const service = await BabelQueueRedrive.connect({
    serviceUrl: parsed.serviceUrl,
    ...(token ? { auth: { token } } : {}),
  });
  let result: RedriveResult;
  try {
    result = await service.run({ ...parsed.options, onItem: (item) => output.out(progressLine(item)) });
  } finally {
    await service.close();
  }
  if (parsed.json) output.out(JSON.stringify(result, null, 2));
  else output.out(summaryLine(result, parsed.options.dryRun === true));
  return result.failed > 0 ? 1 : 0;
}

function parseRedriveArgs(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { options: RedriveOptions; serviceUrl: string; json: boolean } {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      topic: { type: 'string' },
      to: { type: 'string' },
      reason: { type: 'string' },
      urn: { type: 'string' },
      id: { type: 'string', multiple: true },
      max: { type: 'string' },
      'dry-run': { type: 'boolean' },
      bypass: { type: 'boolean' },
      subscription: { type: 'string' },
      'service-url': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.topic) throw new Error('--topic is required');
  let max: number | undefined;
  if (values.max !== undefined) {
    max = Number(values.max);
    if (!/^[0-9]+$/.test(values.max) || max < 1) throw new Error(`--max must be a positive whole number`);
  }
  const ids = values.id?.map((id) => id.trim());
  if (ids?.some((id) => id === '')) throw new Error('--id must not be blank');
  const options: RedriveOptions = {
    topic: values.topic,
    ...(ids !== undefined && { select: ({ envelope }) => ids.includes(String(envelope.meta.id)) }),
    ...(values.to !== undefined && { to: values.to }),
    ...(values.reason !== undefined && { reason: values.reason }),
    ...(values.urn !== undefined && { urn: values.urn }),
    ...(max !== undefined && { max }),
    ...(values['dry-run'] && { dryRun: true }),
    ...(values.bypass && { bypass: true }),
    ...(values.subscription !== undefined && { subscription: values.subscription }),
  };
  const serviceUrl = values['service-url'] ?? env.BABELQUEUE_PULSAR_SERVICE_URL ?? DEFAULT_SERVICE_URL;
  return { options, serviceUrl, json: values.json === true };
}

const LABEL: Record<RedriveItem['outcome'], string> = {
  redriven: 'redriven',
  planned: 'would redrive',
  skipped: 'skipped (selector)',
  kept: 'kept in DLQ',
  failed: 'FAILED',
};

/** One line per record: what happened, which message, where it went. */
export function progressLine(item: RedriveItem): string {
  const parts = [LABEL[item.outcome], `dlq=${item.dlqMessageId}`];
  if (item.id) parts.push(`id=${item.id}`);
  if (item.urn) parts.push(`urn=${item.urn}`);
  if (item.reason) parts.push(`reason=${item.reason}`);
  if (item.to) parts.push(`-> ${item.to}`);
  if (item.bypassed) parts.push('(bypass)');
  if (item.detail) parts.push(`: ${item.detail}`);
  return parts.join(' ');
}

export function summaryLine(result: RedriveResult, dryRun: boolean): string {
  const head = dryRun ? 'dry run, nothing published or acknowledged:' : 'done:';
  return (
    `${head} read ${result.read}, redriven ${result.redriven}, would redrive ${result.planned}, ` +
    `skipped ${result.skipped}, kept (unparseable or no queue) ${result.kept}, failed ${result.failed}`
  );
}

const consoleOutput: CliOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};
