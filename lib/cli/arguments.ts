import { parseArgs } from 'node:util';
import { DeadLetterUsageError } from '../redrive/errors.js';
import { checkSelection, parseDuration, type DeadLetterSelection } from '../redrive/selection.js';
import { deadLetterTopicName } from '../redrive/topic-name.js';
import type { Verb } from './usage.js';
import { quoted, withoutUserInfo } from '../text/untrusted-text.js';

/** What a verb was asked to do, checked before anything connects. */
export interface CliRequest {
  verb: Verb;
  help: boolean;
  /** Fully qualified. */
  topic: string;
  selection: DeadLetterSelection;
  max?: number;
  subscription?: string;
  serviceUrl: string;
  adminUrl?: string;
  token?: string;
  json: boolean;
  /** peek */
  limit: number;
  /** purge */
  yes: boolean;
  /** redrive */
  to?: string;
  allowTargets?: string[];
  dryRun: boolean;
  bypass: boolean;
}

const DEFAULT_SERVICE_URL = 'pulsar://127.0.0.1:6650';

const COMMON = {
  topic: { type: 'string' },
  reason: { type: 'string' },
  urn: { type: 'string' },
  id: { type: 'string', multiple: true },
  'message-id': { type: 'string', multiple: true },
  'older-than': { type: 'string' },
  'newer-than': { type: 'string' },
  max: { type: 'string' },
  subscription: { type: 'string' },
  'service-url': { type: 'string' },
  'admin-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const PER_VERB = {
  list: {},
  stats: {},
  peek: { limit: { type: 'string' } },
  purge: { yes: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
  redrive: {
    to: { type: 'string' },
    'allow-target': { type: 'string', multiple: true },
    'dry-run': { type: 'boolean' },
    bypass: { type: 'boolean' },
  },
} as const;

function positiveWhole(name: string, text: string): number {
  if (!/^\s*[0-9]+\s*$/.test(text) || Number(text) < 1)
    throw new DeadLetterUsageError(`--${name} must be a positive whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

function notBlank(name: string, text: string | undefined): string | undefined {
  if (text !== undefined && text.trim() === '') throw new DeadLetterUsageError(`--${name} must not be blank`);
  return text?.trim();
}

/** Parses and checks one verb's arguments; throws DeadLetterUsageError (or parseArgs' TypeError) when wrong. */
export function parseRequest(verb: Verb, args: readonly string[], env: NodeJS.ProcessEnv): CliRequest {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: { ...COMMON, ...PER_VERB[verb] },
  });
  const flag = (name: string): boolean => (values as Record<string, unknown>)[name] === true;
  const text = (name: string): string | undefined => (values as Record<string, string | undefined>)[name];
  const base = {
    verb,
    json: flag('json'),
    limit: 1,
    yes: flag('yes'),
    dryRun: flag('dry-run'),
    bypass: flag('bypass'),
  };
  if (flag('help')) return { ...base, help: true, topic: '', selection: {}, serviceUrl: '' };

  if (values.topic === undefined) throw new DeadLetterUsageError('--topic is required');
  const topic = deadLetterTopicName(values.topic);
  const selection: DeadLetterSelection = {};
  const reason = notBlank('reason', values.reason);
  if (reason !== undefined) selection.reason = reason;
  const urn = notBlank('urn', values.urn);
  if (urn !== undefined) selection.urn = urn;
  if (values.id !== undefined) selection.ids = values.id.map((id) => notBlank('id', id) ?? '');
  if (values['message-id'] !== undefined)
    selection.messageIds = values['message-id'].map((id) => notBlank('message-id', id) ?? '');
  if (values['older-than'] !== undefined) selection.olderThanMs = parseDuration(values['older-than']);
  if (values['newer-than'] !== undefined) selection.newerThanMs = parseDuration(values['newer-than']);
  checkSelection(selection);

  const request: CliRequest = {
    ...base,
    help: false,
    topic,
    selection,
    serviceUrl:
      notBlank('service-url', values['service-url']) ?? env.BABELQUEUE_PULSAR_SERVICE_URL ?? DEFAULT_SERVICE_URL,
  };
  if (values.max !== undefined) request.max = positiveWhole('max', values.max);
  const limit = text('limit');
  if (limit !== undefined) request.limit = positiveWhole('limit', limit);
  const subscription = notBlank('subscription', values.subscription);
  if (subscription !== undefined) request.subscription = subscription;
  const adminUrl = notBlank('admin-url', values['admin-url']) ?? env.BABELQUEUE_PULSAR_ADMIN_URL;
  if (adminUrl) request.adminUrl = adminUrl;
  if (env.BABELQUEUE_PULSAR_TOKEN) request.token = env.BABELQUEUE_PULSAR_TOKEN;
  const to = notBlank('to', text('to'));
  if (to !== undefined) {
    deadLetterTopicName(to);
    request.to = to;
  }
  const allowTargets = (values as Record<string, string[] | undefined>)['allow-target'];
  if (allowTargets !== undefined) {
    request.allowTargets = allowTargets.map((name) => {
      const topic = notBlank('allow-target', name) ?? '';
      deadLetterTopicName(topic);
      return topic;
    });
  }
  if (verb === 'purge' && request.yes && request.dryRun)
    throw new DeadLetterUsageError('--yes and --dry-run contradict each other');
  for (const url of [request.serviceUrl, request.adminUrl]) {
    if (url !== undefined && !URL.canParse(url))
      throw new DeadLetterUsageError(`${quoted(withoutUserInfo(url))} is not a URL`);
  }
  return request;
}
