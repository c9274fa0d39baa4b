import {
  createPulsarClient,
  NATIVE_PACKAGE,
  NativeClientMissingError,
  type CreateClientDependencies,
} from '../pulsar/client-factory.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import { deadLetterStats, listDeadLetters, purgeDeadLetters, type BrowseOptions } from '../redrive/browse.js';
import {
  BrokerUnreachableError,
  DeadLetterTopicMissingError,
  DeadLetterUsageError,
  isUnreachable,
} from '../redrive/errors.js';
import { redrive } from '../redrive/redrive.js';
import { adminUrlFor, topicExists } from '../redrive/topic-exists.js';
import { parseRequest, type CliRequest } from './arguments.js';
import { progressLine, recordDetail, recordLine, statsLines, summaryLine } from './format.js';
import { runOutboxCli } from './outbox-cli.js';
import { runSchedulesCli } from './schedules-cli.js';
import { runReplayCli } from './replay-cli.js';
import { runUnblockCli } from './unblock-cli.js';
import { GENERAL_USAGE, usage, VERBS, type Verb } from './usage.js';
import { errorText } from '../envelope/error-text.js';
import { escapeControls, terminalJson, withoutUserInfo } from '../text/untrusted-text.js';

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

/** The process exit codes, documented in docs/dead-letters.md. */
export const EXIT = { ok: 0, writeFailed: 1, usage: 2, unreachable: 3, missingTopic: 4 } as const;

/**
 * What the CLI writes about a failure: no URL's user info (a service or admin URL given as
 * `http://user:secret@host` would print its credentials) and no raw control character (an error may quote a record).
 */
const failureText = (text: string): string => escapeControls(withoutUserInfo(text));

const consoleOutput: CliOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** `babelqueue-pulsar <verb> ...`; resolves to the process exit code (EXIT). */
export async function runCli(
  argv: readonly string[],
  output: CliOutput = consoleOutput,
  env: NodeJS.ProcessEnv = process.env,
  dependencies: CreateClientDependencies = {},
): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    (command === undefined ? output.err : output.out)(GENERAL_USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === 'outbox') return runOutboxCli(rest, output, env);
  if (command === 'schedules') return runSchedulesCli(rest, output, env);
  if (command === 'replay') return runReplayCli(rest, output, env);
  if (command === 'unblock') return runUnblockCli(rest, output, env);
  if (!(VERBS as readonly string[]).includes(command)) {
    output.err(`unknown command ${failureText(JSON.stringify(command))}\n\n${GENERAL_USAGE}`);
    return EXIT.usage;
  }
  const verb = command as Verb;
  let request: CliRequest;
  try {
    request = parseRequest(verb, rest, env);
  } catch (error) {
    output.err(`babelqueue-pulsar ${verb}: ${failureText(errorText(error))}`);
    output.err(`\n${usage(verb)}`);
    return EXIT.usage;
  }
  if (request.help) {
    output.out(usage(verb));
    return EXIT.ok;
  }
  // The client first: it connects lazily, so a missing pulsar-client is told before anything is asked of the broker.
  let client: PulsarClientLike | undefined;
  try {
    ({ client } = await createPulsarClient(
      { serviceUrl: request.serviceUrl, ...(request.token ? { auth: { token: request.token } } : {}) },
      dependencies,
    ));
    const exists = await topicExists(request.topic, {
      adminUrl: request.adminUrl ?? adminUrlFor(request.serviceUrl),
      token: request.token,
    });
    if (!exists) throw new DeadLetterTopicMissingError(request.topic);
    return await perform(client, request, output);
  } catch (error) {
    return reportFailure(error, request, output);
  } finally {
    await client?.close().catch(() => undefined);
  }
}

function reportFailure(error: unknown, request: CliRequest, output: CliOutput): number {
  const prefix = `babelqueue-pulsar ${request.verb}:`;
  if (error instanceof DeadLetterUsageError) {
    output.err(failureText(`${prefix} ${error.message}`));
    return EXIT.usage;
  }
  if (error instanceof NativeClientMissingError) {
    output.err(
      `${prefix} the service URL ${request.serviceUrl} needs the native Pulsar client, but "${NATIVE_PACKAGE}" is ` +
        `not installed: run "npm install ${NATIVE_PACKAGE}", or pass --service-url http://<broker>:8080 (the ` +
        'built-in WebSocket client, on the web service port)',
    );
    return EXIT.usage;
  }
  if (error instanceof DeadLetterTopicMissingError) {
    output.err(failureText(`${prefix} ${error.message}`));
    return EXIT.missingTopic;
  }
  if (error instanceof BrokerUnreachableError || isUnreachable(error)) {
    output.err(failureText(`${prefix} cannot reach the broker at ${request.serviceUrl}: ${errorText(error)}`));
    return EXIT.unreachable;
  }
  output.err(failureText(`${prefix} ${errorText(error)}`));
  return EXIT.writeFailed;
}

function browseOptions(request: CliRequest): BrowseOptions {
  return {
    topic: request.topic,
    ...request.selection,
    ...(request.max !== undefined && { max: request.max }),
    ...(request.subscription !== undefined && { subscription: request.subscription }),
  };
}

async function perform(client: PulsarClientLike, request: CliRequest, output: CliOutput): Promise<number> {
  const json = (value: unknown) => output.out(terminalJson(value, 2));
  switch (request.verb) {
    case 'list': {
      const listing = await listDeadLetters(client, browseOptions(request));
      if (request.json) json(listing);
      else {
        listing.records.forEach((record) => output.out(recordLine(record)));
        output.out(`${listing.records.length} record(s) selected of ${listing.read} read from ${listing.topic}`);
      }
      return EXIT.ok;
    }
    case 'peek': {
      const listing = await listDeadLetters(client, browseOptions(request));
      const shown = listing.records.slice(0, request.limit);
      if (request.json) json({ ...listing, records: shown });
      else if (shown.length === 0) output.out(`no record selected of ${listing.read} read from ${listing.topic}`);
      else output.out(shown.map(recordDetail).join('\n\n'));
      return EXIT.ok;
    }
    case 'stats': {
      const stats = await deadLetterStats(client, browseOptions(request));
      if (request.json) json(stats);
      else statsLines(stats, Date.now()).forEach((line) => output.out(line));
      return EXIT.ok;
    }
    case 'purge': {
      const result = await purgeDeadLetters(client, { ...browseOptions(request), yes: request.yes });
      if (request.json) json(result);
      else {
        result.records.forEach((record) =>
          output.out(`${result.dryRun ? 'would purge' : 'purged'} ${recordLine(record)}`),
        );
        output.out(
          result.dryRun
            ? `dry run, nothing removed: ${result.records.length} of ${result.read} read would be purged; add --yes to remove them`
            : `done: purged ${result.purged} of ${result.read} read` +
                (result.putBack.length
                  ? `; put back ${result.putBack.length} that shared a Pulsar batch with a purged one`
                  : ''),
        );
      }
      return EXIT.ok;
    }
    case 'redrive': {
      const result = await redrive(client, {
        ...browseOptions(request),
        ...(request.to !== undefined && { to: request.to }),
        ...(request.allowTargets !== undefined && { allowedTargets: request.allowTargets }),
        ...(request.dryRun && { dryRun: true }),
        ...(request.bypass && { bypass: true }),
        onItem: (item) => {
          if (!request.json) output.out(progressLine(item));
        },
      });
      if (request.json) json(result);
      else output.out(summaryLine(result, request.dryRun));
      return result.failed > 0 ? EXIT.writeFailed : EXIT.ok;
    }
  }
}
