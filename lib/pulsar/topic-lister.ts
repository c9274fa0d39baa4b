/**
 * Lists the topics of a namespace for topic patterns. Neither client can: the WebSocket API has no topic list and
 * the Node native client cannot set how often its own pattern consumer looks for new topics (it looks once a
 * minute), so the server asks the broker's admin API on both, the same way (docs/pulsar-features.md#topic-patterns).
 */
import { adminUrlFor } from './admin-url.js';
import type { TopicPattern } from './topic-pattern.js';

/** How to reach the broker's admin API with a client's credentials. */
export interface AdminAccess {
  adminUrl: string;
  /** The headers of each request (a token supplier is asked again each time). */
  headers(): Promise<Record<string, string>>;
}

/** Lists every topic name of the pattern's namespace (partitions included). */
export type TopicLister = (pattern: TopicPattern) => Promise<string[]>;

const accessByClient = new WeakMap<object, AdminAccess>();

/** Records where a client's broker answers admin requests (set for every client the library creates). */
export function rememberAdminAccess(client: object, serviceUrl: string, headers: AdminAccess['headers']): void {
  const first = serviceUrl.trim().split(',')[0]!;
  let adminUrl: string;
  try {
    adminUrl = adminUrlFor(first);
  } catch {
    return; // not a URL: the client reports it itself
  }
  accessByClient.set(client, { adminUrl, headers });
}

/** Clients created on first use: their admin access is that of the client they create. */
const accessOnceOpen = new WeakMap<object, () => Promise<object>>();

/** Records that `client` lists topics as the client `open()` gives does (a LazyPulsarClient). */
export function rememberAdminAccessOf(client: object, open: () => Promise<object>): void {
  accessOnceOpen.set(client, open);
}

/**
 * Where `client`'s broker answers admin requests and with which headers, for a client the library created (a
 * LazyPulsarClient is created first); undefined for any other client.
 */
export async function adminAccessOf(client: object): Promise<AdminAccess | undefined> {
  const open = accessOnceOpen.get(client);
  return open ? accessByClient.get(await open()) : accessByClient.get(client);
}

/** A client that lists topics itself (the testing kit's InMemoryPulsar). */
interface ListsTopics {
  listTopics(namespace: string): Promise<string[]>;
}
const listsTopics = (client: object): client is ListsTopics =>
  typeof (client as Partial<ListsTopics>).listTopics === 'function';

/** How to list topics for `client`, or undefined when the library does not know its broker's admin API. */
export function topicListerOf(client: object, timeoutMs = 10_000): TopicLister | undefined {
  if (listsTopics(client)) return (pattern) => client.listTopics(`${pattern.tenant}/${pattern.namespace}`);
  const open = accessOnceOpen.get(client);
  if (open)
    return async (pattern) => {
      const list = topicListerOf(await open(), timeoutMs);
      if (!list)
        throw new Error(`cannot list the topics of ${pattern.tenant}/${pattern.namespace}: no admin API known`);
      return list(pattern);
    };
  const access = accessByClient.get(client);
  return access && ((pattern) => listTopics(access, pattern, timeoutMs));
}

async function listTopics(access: AdminAccess, pattern: TopicPattern, timeoutMs: number): Promise<string[]> {
  const base = `${access.adminUrl.replace(/\/+$/, '')}/admin/v2/${pattern.domain}/${encodeURIComponent(
    pattern.tenant,
  )}/${encodeURIComponent(pattern.namespace)}`;
  const headers = await access.headers();
  const get = async (url: string): Promise<string[]> => {
    let response: Response;
    try {
      response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new Error(`cannot list the topics of ${pattern.tenant}/${pattern.namespace} at ${access.adminUrl}`, {
        cause: error,
      });
    }
    if (!response.ok)
      throw new Error(
        `listing the topics of ${pattern.tenant}/${pattern.namespace} at ${access.adminUrl} answered HTTP ` +
          `${response.status}${response.status === 401 || response.status === 403 ? ' (the role may not list the namespace)' : ''}`,
      );
    const body: unknown = await response.json();
    return Array.isArray(body) ? body.filter((name): name is string => typeof name === 'string') : [];
  };
  const [topics, partitioned] = await Promise.all([get(base), get(`${base}/partitioned`)]);
  return [...topics, ...partitioned];
}
