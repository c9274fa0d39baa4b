// `babelqueue-pulsar replay`: re-delivers a subscription's messages from a point in time or a message id, through
// the broker's admin API (docs/operations.md#replaying-a-subscription). A dry run unless --yes.
import { parseArgs } from 'node:util';
import { adminUrlFor } from '../pulsar/admin-url.js';
import { errorText } from '../envelope/error-text.js';
import { IsoTimeError, looksLikeIsoTime, parseIsoTime } from './iso-time.js';
import { parseDuration } from '../redrive/selection.js';
import { replaySubscription, SubscriptionReplayError, type SubscriptionReplayResult } from '../replay/index.js';
import type { ReplayFailureKind } from '../replay/errors.js';
import { escapeControls, terminalJson, withoutUserInfo } from '../text/untrusted-text.js';

interface Output {
  out(line: string): void;
  err(line: string): void;
}

/** The exit codes of the other commands: 0 ok, 1 not done, 2 usage, 3 unreachable, 4 missing topic. */
const CODES: Record<ReplayFailureKind | 'ok', number> = { ok: 0, refused: 1, usage: 2, unreachable: 3, missing: 4 };

export const REPLAY_USAGE = `usage: babelqueue-pulsar replay --topic <topic> --subscription <name> (--since <time> | --message-id <id>) [--yes]

Re-delivers to a subscription every message of its topic from a point on: published at or after --since, or
from --message-id (that message included). A dry run unless --yes: it counts the messages the subscription would
receive again and changes nothing. With --yes the subscription's cursor is reset through the admin API: the
broker disconnects its consumers (every instance, any SDK), they reconnect and receive each message from the
point on again, in order; what was acknowledged after it is handled a second time. Refused when the subscription
still has unacknowledged messages from before the point (the reset would skip them).

  --topic <name>          the topic (orders or persistent://tenant/ns/orders); it must exist
  --subscription <name>   the subscription to replay; it must exist
  --since <time>          an ISO 8601 time (2026-12-02T00:40:00Z) or an age (90s, 15m, 2h, 7d ago)
  --message-id <id>       (ledger,entry,partition,batch) as the logs print it, or ledger:entry[:partition]; on a
                          partitioned topic it replays the partition it names
  --yes                   reset the subscription (without it: a dry run)
  --dry-run               the default; accepted for symmetry with redrive
  --service-url <url>     its host's web port is the admin API unless --admin-url; default
                          $BABELQUEUE_PULSAR_SERVICE_URL or pulsar://127.0.0.1:6650. A token is read from
                          $BABELQUEUE_PULSAR_TOKEN.
  --admin-url <url>       the broker's admin API; default $BABELQUEUE_PULSAR_ADMIN_URL, else from the service URL
  --json                  print the result as JSON
  -h, --help              this help

exit codes: 0 ok, 1 refused (it would skip unacknowledged messages, or the broker refused the reset), 2 usage
            error, 3 cannot reach the broker, 4 the topic or the subscription does not exist`;

class UsageError extends Error {}

interface ReplayRequest {
  topic: string;
  subscription: string;
  since?: number;
  messageId?: string;
  yes: boolean;
  adminUrl: string;
  token?: string;
  json: boolean;
}

/** An ISO 8601 time with a date (checked strictly: no 2026-02-30), or an age before `now` (pure). */
export function parseSince(text: string, now: number): number {
  if (/^\s*\d+(?:\.\d+)?\s*(ms|s|m|h|d)?\s*$/.test(text)) return now - parseDuration(text);
  if (!looksLikeIsoTime(text))
    throw new UsageError(`--since ${JSON.stringify(text)} is neither an ISO 8601 time nor an age such as 15m or 2h`);
  try {
    return parseIsoTime(text);
  } catch (error) {
    // An impossible day (2026-02-30) is a usage error, never a roll-over to another day.
    if (error instanceof IsoTimeError) throw new UsageError(`--since ${error.message}`);
    throw error;
  }
}

function parseReplayRequest(args: readonly string[], env: NodeJS.ProcessEnv, now: number): ReplayRequest | 'help' {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      topic: { type: 'string' },
      subscription: { type: 'string' },
      since: { type: 'string' },
      'message-id': { type: 'string' },
      yes: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      'service-url': { type: 'string' },
      'admin-url': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (!values.topic?.trim()) throw new UsageError('--topic is required');
  if (!values.subscription?.trim()) throw new UsageError('--subscription is required');
  if ((values.since === undefined) === (values['message-id'] === undefined))
    throw new UsageError('give exactly one of --since and --message-id');
  if (values.yes && values['dry-run']) throw new UsageError('--yes and --dry-run contradict each other');
  const serviceUrl = values['service-url']?.trim() || env.BABELQUEUE_PULSAR_SERVICE_URL || 'pulsar://127.0.0.1:6650';
  const adminUrl = values['admin-url']?.trim() || env.BABELQUEUE_PULSAR_ADMIN_URL || adminUrlOf(serviceUrl);
  if (!URL.canParse(adminUrl)) throw new UsageError(`${JSON.stringify(withoutUserInfo(adminUrl))} is not a URL`);
  return {
    topic: values.topic,
    subscription: values.subscription,
    ...(values.since !== undefined && { since: parseSince(values.since, now) }),
    ...(values['message-id'] !== undefined && { messageId: values['message-id'] }),
    yes: values.yes === true,
    adminUrl,
    ...(env.BABELQUEUE_PULSAR_TOKEN && { token: env.BABELQUEUE_PULSAR_TOKEN }),
    json: values.json === true,
  };
}

function adminUrlOf(serviceUrl: string): string {
  if (!URL.canParse(serviceUrl)) throw new UsageError(`${JSON.stringify(withoutUserInfo(serviceUrl))} is not a URL`);
  return adminUrlFor(serviceUrl);
}

function summary(result: SubscriptionReplayResult): string {
  const where = `subscription ${result.subscription} of ${result.topic} ${result.from}`;
  const pending = result.unacknowledged > 0 ? ` (${result.unacknowledged} of them not acknowledged yet)` : '';
  return result.dryRun
    ? `dry run, nothing moved: ${where} would re-deliver ${result.messages} message(s)${pending}; add --yes to replay`
    : `done: ${where} re-delivers ${result.messages} message(s)${pending}; its consumers were disconnected and reconnect`;
}

/** `babelqueue-pulsar replay ...`; resolves to the exit code. */
export async function runReplayCli(
  args: readonly string[],
  output: Output,
  env: NodeJS.ProcessEnv,
  now: () => number = Date.now,
): Promise<number> {
  let request: ReplayRequest | 'help';
  try {
    request = parseReplayRequest(args, env, now());
  } catch (error) {
    output.err(`babelqueue-pulsar replay: ${escapeControls(errorText(error))}\n\n${REPLAY_USAGE}`);
    return CODES.usage;
  }
  if (request === 'help') {
    output.out(REPLAY_USAGE);
    return CODES.ok;
  }
  try {
    const { adminUrl, token, json, ...options } = request;
    const result = await replaySubscription({ adminUrl, ...(token !== undefined && { token }) }, options, now);
    output.out(json ? terminalJson(result, 2) : summary(result));
    return CODES.ok;
  } catch (error) {
    const kind = error instanceof SubscriptionReplayError ? error.kind : 'refused';
    output.err(`babelqueue-pulsar replay: ${escapeControls(withoutUserInfo(errorText(error)))}`);
    return CODES[kind];
  }
}
