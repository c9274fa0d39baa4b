// `babelqueue-pulsar unblock`: unblocks a key of a running app (onExhausted 'block-key', docs/scale.md#per-key-order)
// through its dashboard's endpoint, behind the dashboard's guard. Talks to the app only, never to the broker.
import { parseArgs } from 'node:util';
import { errorText } from '../envelope/error-text.js';
import { escapeControls, terminalJson, withoutUserInfo } from '../text/untrusted-text.js';

export const UNBLOCK_USAGE = `usage: babelqueue-pulsar unblock --url <dashboard url> --topic <topic> --subscription <name> --key <key> [options]

Unblocks a key of a running app whose message failed for good under onExhausted 'block-key': the message is
dead-lettered (its record written first, then the original acknowledged) and the key's next message runs. Calls
the app's dashboard (BabelQueueDashboardModule): POST <url>/api/subscriptions/unblock, behind its guard.

  --url <url>              the dashboard, e.g. http://app:3000/babelqueue; default $BABELQUEUE_DASHBOARD_URL
  --topic <name>           the topic the subscription consumes (short or full name)
  --subscription <name>    the subscription
  --key <key>              the blocked key, as describe() or the dashboard shows it
  --token <token>          sent as "authorization: Bearer <token>"; default $BABELQUEUE_DASHBOARD_TOKEN
  --header <name: value>   a header the dashboard's guard expects (repeat for several)
  --json                   print the app's answer as JSON
  -h, --help               this help

exit codes: 0 ok, 1 the app refused (the key is not blocked, the guard said no, …), 2 usage error,
            3 cannot reach the app`;

const CODES = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

interface Output {
  out(line: string): void;
  err(line: string): void;
}

interface UnblockRequest {
  url: string;
  body: { topic: string; subscription: string; key: string };
  headers: Record<string, string>;
  json: boolean;
}

class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value;
}

function parseUnblock(args: readonly string[], env: NodeJS.ProcessEnv): UnblockRequest | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        url: { type: 'string' },
        topic: { type: 'string' },
        subscription: { type: 'string' },
        key: { type: 'string' },
        token: { type: 'string' },
        header: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(errorText(error));
  }
  if (values.help) return 'help';
  const url = required(values.url ?? env.BABELQUEUE_DASHBOARD_URL, '--url');
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http:// or https:// URL, got ${url}`);
  // The key is taken as given (a key may have spaces); only an empty one is refused.
  if (values.key === undefined || values.key === '') throw new UsageError('--key is required');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = values.token ?? env.BABELQUEUE_DASHBOARD_TOKEN;
  if (token !== undefined && token !== '') headers.authorization = `Bearer ${token}`;
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    const name = colon > 0 ? header.slice(0, colon).trim() : '';
    if (name === '' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new UsageError(`--header must be "name: value", got ${JSON.stringify(header)}`);
    headers[name.toLowerCase()] = header.slice(colon + 1).trim();
  }
  return {
    url: url.replace(/\/+$/, ''),
    body: {
      topic: required(values.topic, '--topic').trim(),
      subscription: required(values.subscription, '--subscription').trim(),
      key: values.key,
    },
    headers,
    json: values.json === true,
  };
}

/** `babelqueue-pulsar unblock …`; resolves to the exit code. */
export async function runUnblockCli(
  args: readonly string[],
  output: Output,
  env: NodeJS.ProcessEnv,
  fetchImpl: typeof fetch = fetch,
): Promise<number> {
  let request: UnblockRequest | 'help';
  try {
    request = parseUnblock(args, env);
  } catch (error) {
    output.err(`babelqueue-pulsar unblock: ${escapeControls(errorText(error))}\n\n${UNBLOCK_USAGE}`);
    return CODES.usage;
  }
  if (request === 'help') {
    output.out(UNBLOCK_USAGE);
    return CODES.ok;
  }
  const endpoint = `${request.url}/api/subscriptions/unblock`;
  let response: Response;
  try {
    response = await fetchImpl(endpoint, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const where = withoutUserInfo(endpoint);
    output.err(escapeControls(`babelqueue-pulsar unblock: cannot reach the app at ${where}: ${errorText(error)}`));
    return CODES.unreachable;
  }
  const text = await response.text();
  let answer: unknown = text;
  try {
    answer = JSON.parse(text);
  } catch {
    // not JSON: shown as text
  }
  if (!response.ok) {
    const message = (answer as { message?: unknown })?.message;
    const why = typeof message === 'string' ? message : text.slice(0, 500);
    output.err(escapeControls(`babelqueue-pulsar unblock: the app answered HTTP ${response.status}: ${why}`));
    return CODES.refused;
  }
  if (request.json) output.out(terminalJson(answer, 2));
  else {
    const { key, topic, subscription } = request.body;
    output.out(
      escapeControls(
        `unblocked key ${JSON.stringify(key)} on ${topic} (subscription ${subscription}): its message was ` +
          'dead-lettered and the key goes on',
      ),
    );
  }
  return CODES.ok;
}
