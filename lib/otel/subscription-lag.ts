// Lag you can see (docs/operations.md#lag-gauges): per subscription, its backlog, the age of its oldest
// unacknowledged message, its retry topic's backlog and its dead-letter topic's depth, read from the broker's admin
// API (one call per topic per interval, whatever number of subscriptions read it) and offered as OpenTelemetry gauges.
import type { ObservableResult } from '@opentelemetry/api';
import { INSTRUMENTATION_NAME, openTelemetry } from './tracing.js';

/** One subscription the gauges report, with the topics its figures come from (full names). */
export interface LagTarget {
  topic: string;
  subscription: string;
  retryTopic: string | null;
  deadLetterTopic: string | null;
}

/** The figures of one subscription at the last poll. */
export interface SubscriptionLag extends LagTarget {
  backlog: number;
  /** 0 when nothing is waiting. */
  oldestUnackedAgeMs: number;
  retryBacklog: number;
  deadLetterDepth: number;
}

/** What the lag figures read from the admin API's topic stats. */
export interface SubscriptionStats {
  msgBacklog?: number;
  earliestMsgPublishTimeInBacklog?: number;
}

export type TopicStats = { subscriptions?: Record<string, SubscriptionStats> } | null;

/** A subscription's backlog and the age of its oldest unacknowledged message in a topic's stats (pure). */
export function lagOf(stats: TopicStats, subscription: string, now: number): { backlog: number; ageMs: number } {
  const entry = stats?.subscriptions?.[subscription];
  const backlog = entry?.msgBacklog ?? 0;
  const earliest = entry?.earliestMsgPublishTimeInBacklog ?? 0;
  return { backlog, ageMs: backlog > 0 && earliest > 0 ? Math.max(0, now - earliest) : 0 };
}

/**
 * The messages waiting in a dead-letter topic (pure): the largest backlog of its subscriptions (a redrive's or the
 * dashboard's reads it); 0 with none, as the broker keeps no message nobody subscribed to (without retention).
 */
export function depthOf(stats: TopicStats): number {
  return Math.max(0, ...Object.values(stats?.subscriptions ?? {}).map((entry) => entry.msgBacklog ?? 0));
}

export interface LagGaugeOptions {
  /** The broker's admin API, e.g. `http://127.0.0.1:8080`. */
  adminUrl: string;
  token?: string | undefined;
  /** How often each topic is asked, ms. */
  intervalMs: number;
  fetch?: typeof fetch;
  now?: () => number;
}

/** How often a topic whose stats answer 404 is asked whether it is partitioned, ms. */
const PARTITIONS_RECHECK_MS = 60_000;

/** Polls the admin API and keeps the last figures; registers the gauges once OpenTelemetry is loaded. */
export class LagGauges {
  private readonly stats = new Map<string, TopicStats>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly options: LagGaugeOptions,
    private readonly targets: () => readonly LagTarget[],
    private readonly warn: (line: string) => void,
  ) {}

  /** The figures of every subscription at the last poll. */
  readings(): SubscriptionLag[] {
    const now = (this.options.now ?? Date.now)();
    return this.targets().map((target) => {
      const { backlog, ageMs } = lagOf(this.stats.get(target.topic) ?? null, target.subscription, now);
      const retry = target.retryTopic === null ? null : (this.stats.get(target.retryTopic) ?? null);
      const dead = target.deadLetterTopic === null ? null : (this.stats.get(target.deadLetterTopic) ?? null);
      return {
        ...target,
        backlog,
        oldestUnackedAgeMs: ageMs,
        retryBacklog: lagOf(retry, target.subscription, now).backlog,
        deadLetterDepth: depthOf(dead),
      };
    });
  }

  /** One admin call per distinct topic; a topic that cannot be read keeps its last figures (one warning). */
  poll(): Promise<void> {
    this.polling ??= this.pollTopics().finally(() => (this.polling = null));
    return this.polling;
  }

  start(): void {
    this.registerGauges();
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.options.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private readonly failing = new Set<string>();
  /** Topics found to be partitioned: their figures are the sum over the partitions, asked for by that name. */
  private readonly partitioned = new Set<string>();
  /** When a 404 topic was last found not to be partitioned either (it may be created later, partitioned). */
  private readonly unpartitionedAt = new Map<string, number>();

  private async pollTopics(): Promise<void> {
    const topics = new Set<string>();
    for (const target of this.targets())
      for (const topic of [target.topic, target.retryTopic, target.deadLetterTopic]) if (topic) topics.add(topic);
    await Promise.all([...topics].map((topic) => this.read(topic)));
  }

  private async read(topic: string): Promise<void> {
    const { adminUrl, token } = this.options;
    const [domain, rest] = topic.split('://') as [string, string];
    const path = rest.split('/').map(encodeURIComponent).join('/');
    const base = `${adminUrl.replace(/\/+$/, '')}/admin/v2/${domain}/${path}`;
    const query = 'getPreciseBacklog=true&getEarliestTimeInBacklog=true';
    const get = (url: string) =>
      (this.options.fetch ?? fetch)(url, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(Math.max(1000, this.options.intervalMs)),
      });
    const summed = `${base}/partitioned-stats?perPartition=false&${query}`;
    try {
      let response = await get(this.partitioned.has(topic) ? summed : `${base}/stats?${query}`);
      // A partitioned topic's own name has no stats of its own (404): its partitions' sum has. Remembered, so it
      // stays one call per topic per interval; a topic that is neither is asked again at most once a minute.
      const now = (this.options.now ?? Date.now)();
      const askedAt = this.unpartitionedAt.get(topic) ?? Number.NEGATIVE_INFINITY;
      if (response.status === 404 && !this.partitioned.has(topic) && now - askedAt >= PARTITIONS_RECHECK_MS) {
        const partitions = await get(summed);
        if (partitions.ok) {
          this.partitioned.add(topic);
          this.unpartitionedAt.delete(topic);
          response = partitions;
        } else this.unpartitionedAt.set(topic, now);
      }
      // No such topic (yet): nothing waits there.
      if (response.status === 404) this.stats.set(topic, null);
      else if (!response.ok) throw new Error(`HTTP ${response.status}`);
      else this.stats.set(topic, (await response.json()) as TopicStats);
      this.failing.delete(topic);
    } catch (error) {
      if (this.failing.has(topic)) return;
      this.failing.add(topic);
      this.warn(
        `lag gauges: cannot read the stats of ${topic} (${(error as Error).message}); keeping its last figures`,
      );
    }
  }

  private registerGauges(): void {
    const api = openTelemetry();
    if (!api) return;
    const meter = api.metrics.getMeter(INSTRUMENTATION_NAME);
    const gauge = (name: string, description: string, unit: string, value: (lag: SubscriptionLag) => number) =>
      meter.createObservableGauge(name, { description, unit }).addCallback((result: ObservableResult) => {
        for (const lag of this.readings())
          result.observe(value(lag), {
            'messaging.destination.name': lag.topic,
            'messaging.destination.subscription.name': lag.subscription,
          });
      });
    gauge('babelqueue.subscription.backlog', 'Messages waiting for the subscription', '{message}', (l) => l.backlog);
    gauge(
      'babelqueue.subscription.oldest_unacked_age',
      'Age of the oldest message the subscription has not acknowledged',
      's',
      (l) => l.oldestUnackedAgeMs / 1000,
    );
    gauge(
      'babelqueue.subscription.retry_backlog',
      "Messages waiting in the subscription's retry topic",
      '{message}',
      (l) => l.retryBacklog,
    );
    gauge(
      'babelqueue.dead_letter.depth',
      "Messages waiting in the subscription's dead-letter topic",
      '{message}',
      (l) => l.deadLetterDepth,
    );
  }
}
