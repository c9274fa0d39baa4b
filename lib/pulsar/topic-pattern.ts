/**
 * Topic patterns (docs/pulsar-features.md#topic-patterns): which topics of one namespace a pattern handler
 * consumes. Pure: the topic list comes from the broker's admin API (see topic-lister.ts).
 */
import { logicalTopicName } from './topic-name.js';

/** A validated `topicsPattern`: the namespace it lists and the regular expression local names must match. */
export interface TopicPattern {
  domain: 'persistent' | 'non-persistent';
  tenant: string;
  namespace: string;
  /** The expression as given, for messages (`orders-.*`). */
  source: string;
  /** Matches a whole local name (the part after the namespace). */
  regex: RegExp;
  /** `persistent://public/default/orders-.*`: how logs and errors name the pattern. */
  label: string;
  /** How the pattern was written: a bare expression, `tenant/namespace/...`, or `persistent://...`. */
  form: 'short' | 'namespace' | 'full';
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.=:-]*$/;
const SHAPE =
  'a regular expression over the topic names of one namespace: "orders-.*" (public/default), ' +
  '"tenant/namespace/orders-.*" or "persistent://tenant/namespace/orders-.*"';

/** Validates a `topicsPattern` (a string or a RegExp without flags); `where` names the option in errors. */
export function parseTopicPattern(value: unknown, where: string): TopicPattern {
  let text: string;
  if (value instanceof RegExp) {
    if (value.flags !== '')
      throw new TypeError(`${where} must be a RegExp without flags (Pulsar matches case-sensitively), got ${value}`);
    text = value.source.replace(/\\\//g, '/');
  } else if (typeof value === 'string' && value.trim() !== '') {
    text = value.trim();
  } else {
    throw new TypeError(`${where} must be ${SHAPE}; got ${String(value)}`);
  }
  let domain: TopicPattern['domain'] = 'persistent';
  let rest = text;
  const scheme = /^(persistent|non-persistent):\/\//.exec(text);
  if (scheme) {
    domain = scheme[1] as TopicPattern['domain'];
    rest = text.slice(scheme[0].length);
  }
  const parts = rest.split('/');
  let tenant = 'public';
  let namespace = 'default';
  let source = rest;
  if (scheme || parts.length > 1) {
    if (parts.length < 3 || !NAME.test(parts[0]!) || !NAME.test(parts[1]!))
      throw new TypeError(
        `${where} ${JSON.stringify(text)} does not name one namespace: Pulsar matches topics within one namespace; use ${SHAPE}`,
      );
    [tenant, namespace] = parts as [string, string];
    source = parts.slice(2).join('/');
  }
  if (source === '') throw new TypeError(`${where} ${JSON.stringify(text)} has no expression after the namespace`);
  let regex: RegExp;
  try {
    regex = new RegExp(`^(?:${source})$`);
  } catch (error) {
    throw new TypeError(
      `${where} ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const form = scheme ? 'full' : parts.length > 1 ? 'namespace' : 'short';
  return { domain, tenant, namespace, source, regex, label: `${domain}://${tenant}/${namespace}/${source}`, form };
}

/**
 * A found topic named the way the pattern was written (pure), as `ctx.getTopic()` reports it: a configured topic is
 * reported as configured, so `orders-.*` finds `orders-eu`, `acme/ops/orders-.*` finds `acme/ops/orders-eu`, and
 * `persistent://acme/ops/orders-.*` the full name.
 */
export function inPatternForm(pattern: TopicPattern, fullTopic: string): string {
  const prefix = namespacePrefix(pattern);
  if (pattern.form === 'full' || !fullTopic.startsWith(prefix)) return fullTopic;
  const local = fullTopic.slice(prefix.length);
  return pattern.form === 'short' ? local : `${pattern.tenant}/${pattern.namespace}/${local}`;
}

/** `persistent://tenant/namespace/` of the pattern: what each listed topic name starts with. */
export const namespacePrefix = (pattern: TopicPattern): string =>
  `${pattern.domain}://${pattern.tenant}/${pattern.namespace}/`;

/** The dead-letter topics the server writes: never consumed by a pattern, or each record would loop. */
export const isDeadLetterTopic = (fullTopic: string): boolean => /\.dlq$/.test(fullTopic);

/** A subscription's retry topic (`<topic>.<subscription>.retry`): its own subscription reads it, no pattern does. */
export const isRetryTopic = (fullTopic: string): boolean => /\.retry$/.test(fullTopic);

/**
 * The full names of the topics a pattern consumes, from the namespace's topic list (partitions of a partitioned
 * topic count as that topic): those whose local name matches, except dead-letter topics (`<topic>.dlq` and
 * `excluded`, the server's own dead-letter topic), retry topics (`<topic>.<subscription>.retry`) and Pulsar's system topics (`__change_events`, ...).
 */
export function matchingTopics(
  pattern: TopicPattern,
  listed: readonly string[],
  excluded: (fullTopic: string) => boolean = () => false,
): string[] {
  const prefix = namespacePrefix(pattern);
  const found = new Set<string>();
  for (const name of listed) {
    const topic = logicalTopicName(name);
    if (!topic.startsWith(prefix)) continue;
    const local = topic.slice(prefix.length);
    if (local.startsWith('__') || isDeadLetterTopic(topic) || isRetryTopic(topic) || excluded(topic)) continue;
    if (pattern.regex.test(local)) found.add(topic);
  }
  return [...found].sort();
}
