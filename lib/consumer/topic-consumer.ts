import type { PulsarMessage } from '../pulsar/client-types.js';
import { isReceiveTimeout } from '../pulsar/receive-timeout.js';
import { HandlerDeadlines } from './handler-timeout.js';
import { asError } from './hooks.js';
import { processMessage, type ProcessorContext, type SettledEvent } from './process-message.js';
import type { PushFeed, PushResult } from './push-feed.js';

export interface TopicConsumerOptions extends Omit<ProcessorContext, 'onHandlerOverdue' | 'firstReport' | 'deadlines'> {
  /** Messages handled at once; the receive loop waits for a free slot before asking for the next. */
  concurrency: number;
  /** How long one receive waits, so that a stop request is noticed promptly. */
  receiveTimeoutMs?: number;
  /** Messages pushed by the client (native listener); without it the consumer asks with receive(). */
  feed?: PushFeed;
  onSettled?(event: SettledEvent): void;
  onLoopError?(error: Error): void;
}

const DONE = Promise.resolve();
const REPORTS_KEPT = 10_000;

/**
 * One topic's intake: takes messages (pushed by the client, or received in a loop), processes up to
 * `concurrency` at once, and stops gracefully (no new messages, in-flight ones settled or left for
 * redelivery, then the consumer closed).
 */
export class TopicConsumer {
  private readonly inFlight = new Set<Promise<void>>();
  /** Handlers past their time-out that still run: their messages are settled, their work is not. */
  private overdue = 0;
  private stopping = false;
  private started = false;
  private loop: Promise<void> | null = null;
  /** Resolved when a slot frees (or on stop); one waiter at a time: the loop or the client's push. */
  private slotWaiter: (() => void) | null = null;

  private readonly context: ProcessorContext;

  constructor(private readonly options: TopicConsumerOptions) {
    this.context = {
      ...options,
      onHandlerOverdue: (urn, timeoutMs, stillRunning) => this.trackOverdue(urn, timeoutMs, stillRunning),
      firstReport: (key) => this.firstReport(key),
      deadlines: new HandlerDeadlines(),
    };
  }

  get topic(): string {
    return this.options.topic;
  }

  get activeCount(): number {
    return this.inFlight.size;
  }

  /** Handlers that passed their time-out and have not ended yet (a stall shows here). */
  get overdueCount(): number {
    return this.overdue;
  }

  /** False while the client is reconnecting the consumer (when the client reports it). */
  isConnected(): boolean {
    return !this.stopping && (this.options.consumer.isConnected?.() ?? true);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.options.feed) this.options.feed.attach((message) => this.acceptPushed(message));
    else this.loop = this.run();
  }

  /** Stops receiving, waits up to `timeoutMs` for in-flight messages, then closes the consumer. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.options.feed?.close();
    this.releaseSlotWaiter();
    await this.loop;
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const result = await Promise.race([Promise.all(this.inFlight).then(() => 'done' as const), timedOut]);
      clearTimeout(timer);
      if (result === 'timeout') {
        this.options.logger.warn(
          `${this.inFlight.size} message(s) on ${this.topic} still running after ${timeoutMs} ms; ` +
            'closing anyway, the broker will redeliver them',
        );
      }
    }
    try {
      await this.options.consumer.close();
    } catch (error) {
      this.options.logger.warn(`closing the consumer of ${this.topic} failed: ${asError(error).message}`);
    }
  }

  private async run(): Promise<void> {
    const receiveTimeoutMs = this.options.receiveTimeoutMs ?? 500;
    let failures = 0;
    while (!this.stopping) {
      await this.freeSlot();
      if (this.stopping) break;
      let message: PulsarMessage;
      try {
        message = await this.options.consumer.receive(receiveTimeoutMs);
        failures = 0;
      } catch (error) {
        // A receive that times out at once (a client without a wait) must not spin the event loop.
        if (this.stopping || isReceiveTimeout(error)) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        failures += 1;
        this.options.onLoopError?.(asError(error));
        // The client reconnects on its own; back off so a broken connection does not spin.
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** failures, 5000)));
        continue;
      }
      this.track(message);
    }
  }

  /** The client's push: processes the message; a promise only when the client must wait for a slot. */
  private acceptPushed(message: PulsarMessage): PushResult {
    if (this.stopping) return undefined; // left unacknowledged: the broker redelivers it after close
    this.track(message);
    return this.inFlight.size < this.options.concurrency ? undefined : this.freeSlot();
  }

  private freeSlot(): Promise<void> {
    if (this.inFlight.size < this.options.concurrency || this.stopping) return DONE;
    return new Promise((resolve) => {
      this.slotWaiter = resolve;
    });
  }

  private releaseSlotWaiter(): void {
    const waiter = this.slotWaiter;
    this.slotWaiter = null;
    waiter?.();
  }

  private track(message: PulsarMessage): void {
    const tracked: Promise<void> = processMessage(message, this.context).then(
      (event) => {
        this.release(tracked);
        try {
          this.options.onSettled?.(event);
        } catch {
          // an observer must not break the loop
        }
      },
      // processMessage handles its own failures; this is a last line of defence for the loop.
      (error: unknown) => {
        this.release(tracked);
        this.options.onLoopError?.(asError(error));
      },
    );
    this.inFlight.add(tracked);
  }

  private release(tracked: Promise<void>): void {
    this.inFlight.delete(tracked);
    this.releaseSlotWaiter();
  }

  private readonly reported = new Set<string>();

  private firstReport(key: string): boolean {
    if (this.reported.has(key)) return false;
    // Bounded: the oldest keys are forgotten first.
    if (this.reported.size >= REPORTS_KEPT) this.reported.delete(this.reported.values().next().value!);
    this.reported.add(key);
    return true;
  }

  private trackOverdue(urn: string, timeoutMs: number, stillRunning: Promise<void>): void {
    this.overdue += 1;
    const since = Date.now();
    this.options.logger.warn(
      `handler for ${urn} on ${this.topic} did not settle within ${timeoutMs} ms: counted as a failed attempt ` +
        `and its message settled; the handler still runs (${this.overdue} overdue on this topic)`,
    );
    void stillRunning.then(() => {
      this.overdue -= 1;
      this.options.logger.warn(
        `overdue handler for ${urn} on ${this.topic} ended ${Date.now() - since} ms after its time-out; ` +
          'its result was ignored',
      );
    });
  }
}
