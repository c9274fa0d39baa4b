import { BabelQueueError } from '../envelope/index.js';
import { BrokerUnreachableError } from './errors.js';

export { adminUrlFor } from '../pulsar/admin-url.js';

export interface TopicExistsOptions {
  adminUrl: string;
  token?: string | undefined;
  /** Per request, ms (default 5000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * Whether the fully qualified topic exists, asked of the admin API, which (unlike a subscribe) never creates it.
 * A partitioned topic exists when it has partitions; a non-partitioned one when its stats answer.
 */
export async function topicExists(fullTopic: string, options: TopicExistsOptions): Promise<boolean> {
  const [domain, rest] = fullTopic.split('://') as [string, string];
  const path = `${options.adminUrl.replace(/\/+$/, '')}/admin/v2/${domain}/${rest.split('/').map(encodeURIComponent).join('/')}`;
  const get = async (url: string): Promise<Response> => {
    try {
      return await (options.fetch ?? fetch)(url, {
        headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
    } catch (error) {
      throw new BrokerUnreachableError(`cannot reach the broker's admin API at ${options.adminUrl}`, {
        cause: error,
      });
    }
  };
  const partitions = await get(`${path}/partitions`);
  if (partitions.ok) {
    const body = (await partitions.json()) as { partitions?: number };
    if ((body.partitions ?? 0) > 0) return true;
  } else if (partitions.status !== 404) {
    throw answered(partitions, options.adminUrl, fullTopic);
  }
  const stats = await get(`${path}/stats`);
  if (stats.ok) return true;
  if (stats.status === 404) return false;
  throw answered(stats, options.adminUrl, fullTopic);
}

/** A server error means the broker is not serving; a refusal (401, 403) is the caller's to fix. */
function answered(response: Response, adminUrl: string, topic: string): Error {
  const text = `the admin API at ${adminUrl} answered HTTP ${response.status} for ${topic}`;
  return response.status >= 500 ? new BrokerUnreachableError(text) : new BabelQueueError(text);
}
