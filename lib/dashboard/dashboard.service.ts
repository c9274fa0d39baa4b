import { BadRequestException, NotFoundException } from '@nestjs/common';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import {
  listDeadLetters,
  purgeDeadLetters,
  statsOf,
  type DeadLetterListing,
  type PurgeResult,
} from '../redrive/browse.js';
import { DeadLetterUsageError } from '../redrive/errors.js';
import { redrive } from '../redrive/redrive.js';
import { parseDuration, type DeadLetterSelection } from '../redrive/selection.js';
import { deadLetterTopicName } from '../redrive/topic-name.js';
import type { RedriveResult } from '../redrive/types.js';
import { DEFAULT_MAX_READ, DEFAULT_PAGE_SIZE, type BabelQueueDashboardOptions } from './dashboard-options.js';
import { errorText } from '../envelope/error-text.js';

export interface TopicSummary {
  topic: string;
  /** Records counted: at most `maxRead`. */
  total: number;
  /** True when `maxRead` records were read: the topic may hold more. */
  truncated: boolean;
  byReason: Record<string, number>;
  byUrn: Record<string, number>;
}

/** What the page's filter form and selection send. */
export interface DashboardQuery {
  topic?: unknown;
  urn?: unknown;
  reason?: unknown;
  olderThan?: unknown;
  newerThan?: unknown;
  messageIds?: unknown;
  dryRun?: unknown;
  /** The list's page: selected records skipped, and how many to return (at most `pageSize`). */
  offset?: unknown;
  limit?: unknown;
}

/** One page of the selected records among the oldest `maxRead` of a topic. */
export interface DashboardPage extends DeadLetterListing {
  offset: number;
  limit: number;
  /** Selected records among those read beyond this page. */
  more: boolean;
  /** True when `maxRead` records were read: the topic may hold more than the page can reach. */
  truncated: boolean;
  /** The bound on records read per request. */
  maxRead: number;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/**
 * The dashboard's operations: the CLI's verbs on the configured topics only. They run one at a time, because
 * they all read through the same Exclusive subscription (a second one at once would fail to subscribe).
 */
export class DashboardService {
  private readonly topics: Map<string, string>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: BabelQueueDashboardOptions,
    private readonly client: () => PulsarClientLike,
  ) {
    this.topics = new Map(options.topics.map((topic) => [deadLetterTopicName(topic), topic]));
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next.catch((error: unknown) => {
      if (error instanceof DeadLetterUsageError) throw new BadRequestException(error.message);
      throw error;
    });
  }

  private topicOf(query: DashboardQuery): string {
    const asked = text(query.topic);
    if (asked === undefined) throw new BadRequestException('topic is required');
    let full: string;
    try {
      full = deadLetterTopicName(asked);
    } catch (error) {
      throw new BadRequestException(errorText(error));
    }
    // Only configured topics: a request never creates or reads anything else.
    if (!this.topics.has(full)) throw new NotFoundException(`${asked} is not a dead-letter topic of this dashboard`);
    return full;
  }

  private selectionOf(query: DashboardQuery): DeadLetterSelection {
    const selection: DeadLetterSelection = {};
    const urn = text(query.urn);
    if (urn) selection.urn = urn;
    const reason = text(query.reason);
    if (reason) selection.reason = reason;
    try {
      const older = text(query.olderThan);
      if (older) selection.olderThanMs = parseDuration(older);
      const newer = text(query.newerThan);
      if (newer) selection.newerThanMs = parseDuration(newer);
    } catch (error) {
      throw new BadRequestException(errorText(error));
    }
    return selection;
  }

  private get maxRead(): number {
    return this.options.maxRead ?? DEFAULT_MAX_READ;
  }

  private get pageSize(): number {
    return Math.min(this.options.pageSize ?? DEFAULT_PAGE_SIZE, this.maxRead);
  }

  /** A whole number of at least `min` from the query, else the fallback; a bad one is a 400. */
  private whole(value: unknown, name: string, fallback: number, min: number): number {
    if (value === undefined || value === '') return fallback;
    const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    if (!Number.isSafeInteger(n) || (n as number) < min)
      throw new BadRequestException(`${name} must be a whole number of ${min} or more`);
    return n as number;
  }

  private readOptions() {
    return {
      max: this.maxRead,
      idleTimeoutMs: this.options.idleTimeoutMs ?? 500,
      ...(this.options.subscription !== undefined && { subscription: this.options.subscription }),
    };
  }

  async summaries(): Promise<TopicSummary[]> {
    const summaries: TopicSummary[] = [];
    for (const topic of this.topics.keys()) {
      const listing = await this.serially(() => listDeadLetters(this.client(), { topic, ...this.readOptions() }));
      const { total, byReason, byUrn } = statsOf(listing);
      summaries.push({ topic, total, truncated: listing.read >= this.maxRead, byReason, byUrn });
    }
    return summaries;
  }

  async records(query: DashboardQuery): Promise<DashboardPage> {
    const topic = this.topicOf(query);
    const selection = this.selectionOf(query);
    const offset = this.whole(query.offset, 'offset', 0, 0);
    const limit = Math.min(this.whole(query.limit, 'limit', this.pageSize, 1), this.pageSize);
    const listing = await this.serially(() =>
      listDeadLetters(this.client(), { topic, ...selection, ...this.readOptions() }),
    );
    return {
      ...listing,
      records: listing.records.slice(offset, offset + limit),
      offset,
      limit,
      more: listing.records.length > offset + limit,
      truncated: listing.read >= this.maxRead,
      maxRead: this.maxRead,
    };
  }

  /** The records picked on the page: the filter's selectors and the ticked message ids, which are required. */
  private picked(query: DashboardQuery): DeadLetterSelection & { topic: string } {
    const ids = query.messageIds;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.trim() !== ''))
      throw new BadRequestException('messageIds: pick at least one record');
    return { topic: this.topicOf(query), ...this.selectionOf(query), messageIds: ids as string[] };
  }

  redrive(query: DashboardQuery): Promise<RedriveResult> {
    const picked = this.picked(query);
    return this.serially(() =>
      redrive(this.client(), {
        ...picked,
        ...this.readOptions(),
        ...(this.options.redriveTargets !== undefined && { allowedTargets: this.options.redriveTargets }),
        dryRun: query.dryRun !== false,
      }),
    );
  }

  purge(query: DashboardQuery): Promise<PurgeResult> {
    const picked = this.picked(query);
    return this.serially(() =>
      purgeDeadLetters(this.client(), { ...picked, ...this.readOptions(), yes: query.dryRun === false }),
    );
  }
}
