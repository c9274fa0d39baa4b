import { Logger } from '@nestjs/common';
import { BabelQueueError } from '../envelope/index.js';
import { pulsarProperties } from '../pulsar/binding.js';
import type { PulsarProducerMessage } from '../pulsar/client-types.js';
import type { ProducerSource } from '../nest/server/server-options.js';
import { outboxBackoffMs } from './backoff.js';
import { claimOutboxRows, type OutboxPool, type OutboxRow } from './relay-store.js';
import { checkOutboxTable } from './table.js';
import { errorText } from '../envelope/error-text.js';

export interface OutboxRelayOptions {
  /** A `pg` Pool on the database of the outbox table (TypeORM: `dataSource.driver.master`). */
  pool: OutboxPool;
  /** Where producers come from: the module's producer pool, or `new BabelProducerPool(pulsarClient)`. */
  producers: ProducerSource;
  /** The outbox table; default `babelqueue_outbox`. */
  table?: string;
  /** Rows claimed and published per pass; default 100. */
  batchSize?: number;
  /** Pause between passes when the last one found less than a full batch; default 500 ms. */
  pollIntervalMs?: number;
  /** A publish not stored by the broker within this time counts as failed; default 10 000 ms. */
  publishTimeoutMs?: number;
  logger?: Pick<Logger, 'log' | 'warn' | 'error'>;
}

export interface OutboxRelayResult {
  /** Rows the broker stored and that are now marked published. */
  published: number;
  /** Rows whose publish failed: still pending, attempts + 1, due again after the backoff. */
  failed: number;
}

/** drain() stops after this many passes even if every pass made progress. */
const DRAIN_CEILING = 10_000;

const positiveInteger = (value: unknown, fallback: number, name: string): number => {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new BabelQueueError(`${name} must be a positive integer, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
};

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BabelQueueError(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The publishing side of the transactional outbox. Each pass claims up to `batchSize` due rows (oldest first,
 * locked with SKIP LOCKED so several relays share the work without publishing a row twice at once), publishes
 * each stored body byte for byte with the `bq-*` properties read from it, and, in the same transaction, marks
 * the rows the broker stored as published and the others failed (attempts + 1, due again after the backoff).
 * A crash after a publish and before the commit leaves the row pending: it is published again with the same
 * `meta.id`, which consumer idempotency removes. See docs/outbox.md.
 */
export class OutboxRelay {
  readonly table: string;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly publishTimeoutMs: number;
  private readonly logger: Pick<Logger, 'log' | 'warn' | 'error'>;
  private pass: Promise<OutboxRelayResult> | null = null;
  private loop: Promise<void> | null = null;
  private running = false;
  private wakeUp: (() => void) | null = null;

  constructor(private readonly options: OutboxRelayOptions) {
    if (!options || typeof options.pool?.connect !== 'function') {
      throw new BabelQueueError('OutboxRelay needs options.pool: a pg Pool on the database of the outbox table');
    }
    if (typeof options.producers?.producerFor !== 'function') {
      throw new BabelQueueError('OutboxRelay needs options.producers (e.g. new BabelProducerPool(pulsarClient))');
    }
    this.table = checkOutboxTable(options.table, 'options.table');
    this.batchSize = positiveInteger(options.batchSize, 100, 'options.batchSize');
    this.pollIntervalMs = positiveInteger(options.pollIntervalMs, 500, 'options.pollIntervalMs');
    this.publishTimeoutMs = positiveInteger(options.publishTimeoutMs, 10_000, 'options.publishTimeoutMs');
    this.logger = options.logger ?? new Logger('OutboxRelay');
  }

  /** True between start() and stop(). */
  get started(): boolean {
    return this.running;
  }

  /** One pass: claims, publishes and marks at most one batch. Passes of one relay never overlap. */
  flush(): Promise<OutboxRelayResult> {
    const previous = this.pass ?? Promise.resolve({ published: 0, failed: 0 });
    const next = previous.catch(() => undefined).then(() => this.flushOnce());
    this.pass = next;
    return next;
  }

  /** Passes until one publishes nothing (the outbox is empty, or only failing rows are left). */
  async drain(maxPasses = DRAIN_CEILING): Promise<OutboxRelayResult> {
    const total = { published: 0, failed: 0 };
    for (let pass = 0; pass < Math.min(maxPasses, DRAIN_CEILING); pass++) {
      const result = await this.flush();
      total.published += result.published;
      total.failed += result.failed;
      if (result.published === 0) break;
    }
    return total;
  }

  /** Runs passes in the background until stop(): back to back while batches are full, else every pollIntervalMs. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Asks a sleeping background loop for a pass now (e.g. right after a commit that wrote to the outbox). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops the background loop after the pass under way (its rows are marked before this resolves). */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.loop;
    await this.pass?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let handled = 0;
      try {
        const result = await this.flush();
        handled = result.published + result.failed;
      } catch (error) {
        this.logger.warn(`outbox pass failed (rows stay pending): ${error instanceof Error ? error.message : error}`);
      }
      if (this.running && handled < this.batchSize) await this.sleep(this.pollIntervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  private async flushOnce(): Promise<OutboxRelayResult> {
    const claim = await claimOutboxRows(this.options.pool, this.table, this.batchSize);
    if (claim.rows.length === 0) {
      await claim.commit();
      return { published: 0, failed: 0 };
    }
    try {
      // Started together: sends to one producer leave in the order they were issued, which is row order.
      const outcomes = await Promise.allSettled(claim.rows.map((row) => this.publish(row)));
      const published: string[] = [];
      let failed = 0;
      for (const [index, outcome] of outcomes.entries()) {
        const row = claim.rows[index]!;
        if (outcome.status === 'fulfilled') {
          published.push(row.seq);
          continue;
        }
        failed += 1;
        const reason = errorText(outcome.reason);
        await claim.markFailed(row.seq, reason, outboxBackoffMs(row.attempts));
        this.logger.warn(
          `outbox row ${row.messageId} to ${row.topic} not published (attempt ${row.attempts + 1}): ${reason}`,
        );
      }
      await claim.markPublished(published);
      await claim.commit();
      return { published: published.length, failed };
    } catch (error) {
      await claim.abandon(error);
      throw error;
    }
  }

  private async publish(row: OutboxRow): Promise<void> {
    const message: PulsarProducerMessage = {
      data: row.body,
      properties: pulsarProperties(JSON.parse(row.body.toString('utf8')) as Record<string, unknown>),
    };
    if (row.partitionKey) message.partitionKey = row.partitionKey;
    const what = `publishing outbox row ${row.messageId} to ${row.topic}`;
    await withTimeout(
      this.options.producers.producerFor(row.topic).then((producer) => producer.send(message)),
      this.publishTimeoutMs,
      what,
    );
  }
}
