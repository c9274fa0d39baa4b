import { PulsarWebSocketError } from './websocket/errors.js';

export type TopicDomain = 'persistent' | 'non-persistent';

export interface TopicName {
  /** Fully qualified name, e.g. `persistent://public/default/orders`. */
  readonly full: string;
  readonly domain: TopicDomain;
  readonly tenant: string;
  readonly namespace: string;
  readonly local: string;
  /** URL path fragment for `/ws/v2/{producer|consumer}/…`, each segment percent-encoded. */
  readonly path: string;
}

/** Pulsar's rule for tenant and namespace names (NamedEntity). */
const NAMED_ENTITY = /^[-=:.\w]+$/;

function invalid(name: string, why: string): PulsarWebSocketError {
  return new PulsarWebSocketError(
    `Invalid topic name ${JSON.stringify(name)}: ${why}. Use a short name ("orders"), ` +
      `"tenant/namespace/topic" or a full name ("persistent://tenant/namespace/topic").`,
    { code: 'InvalidTopic', topic: name },
  );
}

/**
 * Parse a topic the way Pulsar's TopicName does for v2 names:
 * - `orders`                      → persistent://public/default/orders
 * - `tenant/ns/orders`            → persistent://tenant/ns/orders
 * - `persistent://t/ns/orders`, `non-persistent://t/ns/orders` as given.
 * Legacy v1 names (with a cluster segment) are rejected: the client only speaks the /ws/v2 API.
 * Throws PulsarWebSocketError (code InvalidTopic) for anything else.
 */
export function parseTopic(name: unknown): TopicName {
  if (typeof name !== 'string') throw invalid(String(name), 'a topic name must be a string');
  if (name.length === 0) throw invalid(name, 'the name is empty');
  if (name.trim() !== name) throw invalid(name, 'leading or trailing whitespace');

  let domain: TopicDomain = 'persistent';
  let rest = name;
  const sep = name.indexOf('://');
  if (sep >= 0) {
    const scheme = name.slice(0, sep);
    if (scheme !== 'persistent' && scheme !== 'non-persistent') {
      throw invalid(name, `unknown domain "${scheme}" (expected persistent or non-persistent)`);
    }
    domain = scheme;
    rest = name.slice(sep + 3);
  }

  const parts = rest.split('/');
  let tenant: string;
  let namespace: string;
  let local: string;
  if (sep < 0 && parts.length === 1) {
    [tenant, namespace, local] = ['public', 'default', rest];
  } else if (parts.length === 3) {
    [tenant, namespace, local] = parts as [string, string, string];
  } else {
    throw invalid(name, 'expected exactly tenant/namespace/topic after the domain');
  }
  if (!NAMED_ENTITY.test(tenant)) throw invalid(name, `invalid tenant "${tenant}"`);
  if (!NAMED_ENTITY.test(namespace)) throw invalid(name, `invalid namespace "${namespace}"`);
  if (local.length === 0) throw invalid(name, 'the local topic name is empty');
  // A '.' or '..' segment would climb out of the topic's path in the admin and WebSocket URLs built from it.
  for (const segment of [tenant, namespace, local])
    if (segment === '.' || segment === '..') throw invalid(name, `"${segment}" is not a name (a path segment)`);

  return {
    full: `${domain}://${tenant}/${namespace}/${local}`,
    domain,
    tenant,
    namespace,
    local,
    path: [domain, tenant, namespace, local].map(encodeURIComponent).join('/'),
  };
}

/** The fully qualified form of `name` (throws PulsarWebSocketError InvalidTopic when malformed). */
export function normalizeTopic(name: unknown): string {
  return parseTopic(name).full;
}

/**
 * The fully qualified form of `name`, or `name` itself when it is not a topic name (a pattern's label): for
 * comparing topics that may be written short or full, where a malformed name is reported elsewhere.
 */
export function fullTopicName(name: string): string {
  try {
    return parseTopic(name).full;
  } catch {
    return name;
  }
}

/**
 * Partitioned topics: a partitioned topic `orders` is stored as `orders-partition-0` … `orders-partition-N-1`.
 * Both clients report the partition a message came from in its topic name (the native client does so itself,
 * the WebSocket client reads it from the message id), so the partition is read from that one place.
 */
const PARTITION_SUFFIX = /-partition-(\d+)$/;

/** The partition index in a topic name, -1 when the name is not one partition of a partitioned topic. */
export function partitionOf(topicName: string): number {
  const match = PARTITION_SUFFIX.exec(topicName);
  return match ? Number(match[1]) : -1;
}

/** The partitioned topic a partition belongs to (`…/orders-partition-2` → `…/orders`); other names as given. */
export function logicalTopicName(topicName: string): string {
  return topicName.replace(PARTITION_SUFFIX, '');
}

/** The name of one partition of `topicName`, as the broker and the native client write it. */
export function partitionTopicName(topicName: string, partition: number): string {
  return partition >= 0 && partitionOf(topicName) < 0 ? `${topicName}-partition-${partition}` : topicName;
}
