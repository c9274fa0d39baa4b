// The dashboard's live subscriptions view: the app's consumers as its server runs them, with backlog and lag from
// the broker's admin API (one call per topic per reading), pause / resume of one subscription, and unblock of a
// key blocked there (onExhausted 'block-key').
import { BadRequestException } from '@nestjs/common';
import { errorText } from '../envelope/error-text.js';
import type { BabelPulsarServer } from '../nest/server/babel-pulsar.server.js';
import type { TopicStats } from '../otel/subscription-lag.js';
import { adminAccessOf } from '../pulsar/topic-lister.js';
import { fullTopicName } from '../pulsar/topic-name.js';
import { TopicAdmin, type AdminConnection } from '../replay/admin-calls.js';
import { RateMeter, subscriptionRows, type DashboardSubscription } from './subscription-rows.js';

/** What the view needs of the app's server. */
export type SubscriptionControl = Pick<BabelPulsarServer, 'describe' | 'pause' | 'resume' | 'unblock'>;

/** The broker's admin API, for backlog and lag (default: the one of the app's client). */
export interface DashboardAdminOptions {
  /** e.g. `http://broker:8080`. */
  adminUrl: string;
  /** A bearer token for a secured cluster. */
  token?: string;
}

/** What `GET api/subscriptions` answers. */
export interface DashboardSubscriptions {
  subscriptions: DashboardSubscription[];
  /** Why backlog and lag are missing from some rows (the admin API could not be read), or null. */
  statsProblem: string | null;
}

/** What the page's pause and resume buttons send. */
export interface SubscriptionTargetBody {
  topic?: unknown;
  subscription?: unknown;
}

/** What the page's unblock button (and `babelqueue-pulsar unblock`) sends: the subscription, and the blocked key. */
export interface UnblockBody extends SubscriptionTargetBody {
  key?: unknown;
}

export interface SubscriptionsViewDeps {
  /** The app's server, or null in an app that only publishes. */
  server(): SubscriptionControl | null;
  /** Where the admin API is; undefined when nobody said and the client does not tell. */
  admin(): Promise<AdminConnection | undefined>;
  now?: () => number;
}

const ADMIN_TIMEOUT_MS = 5000;

export class SubscriptionsView {
  private readonly meter = new RateMeter();
  /** Pages polling at once share one reading: one admin call per topic. */
  private reading: Promise<DashboardSubscriptions> | null = null;

  constructor(private readonly deps: SubscriptionsViewDeps) {}

  list(): Promise<DashboardSubscriptions> {
    this.reading ??= this.read().finally(() => (this.reading = null));
    return this.reading;
  }

  async pause(body: SubscriptionTargetBody): Promise<{ paused: true }> {
    const target = targetOf(body);
    const server = this.server();
    try {
      await server.pause(target);
    } catch (error) {
      throw new BadRequestException(errorText(error));
    }
    return { paused: true };
  }

  resume(body: SubscriptionTargetBody): { resumed: true } {
    const target = targetOf(body);
    const server = this.server();
    try {
      server.resume(target);
    } catch (error) {
      throw new BadRequestException(errorText(error));
    }
    return { resumed: true };
  }

  /** Dead-letters the blocked message of one key on one subscription, then its key goes on. */
  async unblock(body: UnblockBody): Promise<{ unblocked: true; key: string; settled: Array<{ action: string }> }> {
    const target = targetOf(body);
    const key = body?.key;
    if (typeof key !== 'string' || key === '')
      throw new BadRequestException('name the blocked key: { "topic": "…", "subscription": "…", "key": "…" }');
    const server = this.server();
    try {
      const events = await server.unblock(key, target);
      return { unblocked: true, key, settled: events.map(({ action }) => ({ action })) };
    } catch (error) {
      throw new BadRequestException(errorText(error));
    }
  }

  private server(): SubscriptionControl {
    const server = this.deps.server();
    if (server === null) throw new BadRequestException('no subscriptions on this app: it runs no BabelPulsarServer');
    return server;
  }

  private async read(): Promise<DashboardSubscriptions> {
    const states = this.deps.server()?.describe() ?? [];
    if (states.length === 0) return { subscriptions: [], statsProblem: null };
    const topics = [...new Set(states.map((state) => fullTopicName(state.topic)))];
    const { stats, problem } = await this.readStats(topics);
    const now = (this.deps.now ?? Date.now)();
    const rows = subscriptionRows(states, (topic) => stats.get(fullTopicName(topic)), this.meter, now);
    return { subscriptions: rows, statsProblem: problem };
  }

  /** One admin call per topic; a topic that cannot be read has no stats (its rows show none). */
  private async readStats(topics: readonly string[]) {
    const stats = new Map<string, TopicStats>();
    let connection: AdminConnection | undefined;
    try {
      connection = await this.deps.admin();
    } catch (error) {
      return { stats, problem: `backlog and lag: ${errorText(error)}` };
    }
    if (connection === undefined)
      return {
        stats,
        problem: 'backlog and lag need the admin API: BabelQueueDashboardModule.forRoot({ admin: { adminUrl } })',
      };
    const admin = { ...connection, timeoutMs: ADMIN_TIMEOUT_MS };
    const problems: string[] = [];
    await Promise.all(
      topics.map(async (topic) => {
        try {
          stats.set(topic, await new TopicAdmin(admin, topic).stats());
        } catch (error) {
          problems.push(errorText(error));
        }
      }),
    );
    return { stats, problem: problems.length === 0 ? null : `backlog and lag: ${problems.join('; ')}` };
  }
}

/** The admin connection of the dashboard's options, else the one the app's client knows. */
export async function adminConnectionOf(
  given: DashboardAdminOptions | undefined,
  client: () => object,
): Promise<AdminConnection | undefined> {
  if (given) return { adminUrl: given.adminUrl, ...(given.token !== undefined && { token: given.token }) };
  const access = await adminAccessOf(client());
  return access && { adminUrl: access.adminUrl, headers: () => access.headers() };
}

/** `{ topic, subscription }` from a request body: both are needed, so one button never pauses more than its row. */
function targetOf(body: SubscriptionTargetBody): { topic: string; subscription: string } {
  const { topic, subscription } = body ?? {};
  if (typeof topic !== 'string' || topic.trim() === '' || typeof subscription !== 'string' || subscription === '')
    throw new BadRequestException('name the subscription: { "topic": "…", "subscription": "…" }');
  return { topic, subscription };
}
