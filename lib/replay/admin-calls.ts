import type { TopicStats } from '../otel/subscription-lag.js';
import { SubscriptionReplayError } from './errors.js';

/** How to reach the broker's admin API (the web service port). */
export interface AdminConnection {
  /** e.g. `http://127.0.0.1:8080`; see adminUrlFor for the one of a service URL. */
  adminUrl: string;
  /** A bearer token for a secured cluster. */
  token?: string | undefined;
  /** The headers of each request, asked each time (a client's own credentials); instead of `token`. */
  headers?: () => Promise<Record<string, string>>;
  /** Per request, ms (default 10000). */
  timeoutMs?: number;
  /** The fetch to use (tests); default the global one. */
  fetch?: typeof fetch;
}

/** One topic's admin API paths (a partition is its own topic here). */
export class TopicAdmin {
  private readonly base: string;

  constructor(
    private readonly connection: AdminConnection,
    /** `persistent://tenant/namespace/topic` */
    readonly topic: string,
  ) {
    const [domain, rest] = topic.split('://') as [string, string];
    const path = rest.split('/').map(encodeURIComponent).join('/');
    this.base = `${connection.adminUrl.replace(/\/+$/, '')}/admin/v2/${domain}/${path}`;
  }

  /** The topic's partitions, 0 for a topic that is not partitioned (or does not exist). */
  async partitions(): Promise<number> {
    const response = await this.call('GET', '/partitions', undefined, [404]);
    if (response.status === 404) return 0;
    return ((await response.json()) as { partitions?: number }).partitions ?? 0;
  }

  /** Each subscription's backlog in messages (batches counted by their messages), or null when there is no topic. */
  async backlogs(partitioned: boolean): Promise<Map<string, number> | null> {
    const path = `/${partitioned ? 'partitioned-stats' : 'stats'}?getPreciseBacklog=true`;
    const response = await this.call('GET', path, undefined, [404]);
    if (response.status === 404) return null;
    const stats = (await response.json()) as { subscriptions?: Record<string, { msgBacklog?: number }> };
    return new Map(Object.entries(stats.subscriptions ?? {}).map(([name, sub]) => [name, sub.msgBacklog ?? 0]));
  }

  /**
   * The topic's stats with each subscription's precise backlog and the publish time of its oldest unacknowledged
   * message, or null when the broker has no such topic (a partitioned topic's stats are its partitions').
   */
  async stats(): Promise<TopicStats | null> {
    const query = 'getPreciseBacklog=true&getEarliestTimeInBacklog=true';
    let response = await this.call('GET', `/stats?${query}`, undefined, [404]);
    // A partitioned topic's own name has no stats (404): the sum of its partitions' has.
    if (response.status === 404)
      response = await this.call('GET', `/partitioned-stats?perPartition=false&${query}`, undefined, [404]);
    if (response.status === 404) return null;
    return (await response.json()) as TopicStats;
  }

  async createSubscriptionAtEarliest(subscription: string): Promise<void> {
    await this.call('PUT', `/subscription/${encodeURIComponent(subscription)}`, {
      ledgerId: -1,
      entryId: -1,
      partitionIndex: -1,
    });
  }

  async deleteSubscription(subscription: string): Promise<void> {
    await this.call('DELETE', `/subscription/${encodeURIComponent(subscription)}`, undefined, [404]);
  }

  /** Moves the subscription's cursor to the first message published at or after `since`. */
  async resetToTime(subscription: string, since: number): Promise<void> {
    await this.call('POST', `/subscription/${encodeURIComponent(subscription)}/resetcursor/${since}`);
  }

  /** Moves the subscription's cursor to the message (included). */
  async resetToMessage(subscription: string, id: object): Promise<void> {
    await this.call('POST', `/subscription/${encodeURIComponent(subscription)}/resetcursor?isExcluded=false`, id);
  }

  private async call(method: string, path: string, body?: object, allowed: number[] = []): Promise<Response> {
    const { connection } = this;
    let response: Response;
    try {
      response = await (connection.fetch ?? fetch)(`${this.base}${path}`, {
        method,
        headers: {
          ...(connection.token ? { Authorization: `Bearer ${connection.token}` } : {}),
          ...(connection.headers && (await connection.headers())),
          ...(body ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(body && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(connection.timeoutMs ?? 10_000),
      });
    } catch (error) {
      throw new SubscriptionReplayError(
        'unreachable',
        `cannot reach the broker's admin API at ${connection.adminUrl}`,
        {
          cause: error,
        },
      );
    }
    if (response.ok || allowed.includes(response.status)) return response;
    const detail = (await response.text().catch(() => '')).slice(0, 300);
    const text = `the admin API at ${connection.adminUrl} answered HTTP ${response.status} to ${method} ${path} of ${this.topic}${detail ? `: ${detail}` : ''}`;
    throw new SubscriptionReplayError(response.status >= 502 ? 'unreachable' : 'refused', text);
  }
}
