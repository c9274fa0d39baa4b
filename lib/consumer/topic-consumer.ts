import type { PulsarMessage } from '../pulsar/client-types.js';
import { startReceivePump, type ReceivePump } from '../pulsar/receive-pump.js';
import { HandlerDeadlines } from './handler-timeout.js';
import { KeyOrder } from './key-order.js';
import { OverdueHandlers } from './overdue-handlers.js';
import { NackCount } from './nack-count.js';
import { asError } from './hooks.js';
import { processMessage } from './process-message.js';
import type { ProcessorContext, SettledEvent } from './processor-context.js';
import type { PushResult } from './push-feed.js';
import type { TopicConsumerOptions } from './topic-consumer-options.js';

export type { TopicConsumerOptions } from './topic-consumer-options.js';

const DONE = Promise.resolve();
const REPORTS_KEPT = 10_000;
const PAUSED_HOLD_LIMIT = 1000;

/**
 * Pushed messages that may wait for a slot (at least `concurrency`, never more than the receiver queue) before the
 * client is made to wait: room for two of the native client's batches (lib/pulsar/native/adapter.ts).
 */
const WAITING_LIMIT = 64;

/**
 * One topic's intake: takes the messages the client hands over, processes up to `concurrency` at once, and stops
 * gracefully (no new messages, in-flight ones settled or left for redelivery, then the consumer closed).
 */
export class TopicConsumer {
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = false;
  private started = false;
  /** The consumer's own receive pump, when no feed was given. */
  private pump: ReceivePump | null = null;
  /** See pause(): no new message is handled while set. */
  private paused = false;
  /** Resolved on resume (or stop). */
  private resumeWaiters: Array<() => void> = [];
  /** Messages the client handed over while paused, handled in order on resume (left for redelivery on stop). */
  private held: PulsarMessage[] = [];
  /** Pushes waiting for every held message to have a slot (see acceptPushed): woken as the last one gets one. */
  private heldWaiters: Array<() => void> = [];
  /** A client waiting for room for several messages (see roomForPushedAtLeast). */
  private roomWaiter: { count: number; wake(): void } | null = null;
  /** With `ordering: 'key'`: the lanes, the ready and retried messages, the blocked keys. */
  private readonly keyOrder: KeyOrder | null;
  /** Lane messages and retries waiting (see waitingCount): the client is woken once they are fewer than its limit. */
  private crowdWaiters: Array<() => void> = [];

  /** Handlers past their time-out that still run: their messages are settled, their work is not. */
  private readonly overdueHandlers: OverdueHandlers;
  private readonly context: ProcessorContext;
  /** Pushed messages that may wait for a slot before the client is made to wait: never more than its queue. */
  private readonly waitingLimit: number;

  constructor(private readonly options: TopicConsumerOptions) {
    this.waitingLimit = Math.min(
      Math.max(options.concurrency, WAITING_LIMIT),
      options.pausedHoldLimit ?? Number.POSITIVE_INFINITY,
    );
    this.overdueHandlers = new OverdueHandlers(
      options.topic,
      () => this.maxOverdue,
      options.logger,
      () => this.pullHeld(),
    );
    this.context = {
      ...options,
      onHandlerOverdue: (urn, timeoutMs, stillRunning) => this.overdueHandlers.track(urn, timeoutMs, stillRunning),
      firstReport: (key) => this.firstReport(key),
      deadlines: new HandlerDeadlines(),
      nackCount: new NackCount(),
      retryInPlace: options.ordering === 'key',
    };
    this.keyOrder =
      options.ordering === 'key'
        ? new KeyOrder({ isStopping: () => this.stopping, wake: () => this.pullHeld() })
        : null;
  }

  get topic(): string {
    return this.options.topic;
  }

  get activeCount(): number {
    return this.inFlight.size;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Messages handed over by the client while paused, waiting for resume(). */
  get heldCount(): number {
    return this.held.length;
  }

  /**
   * Messages taken in but not running (`ordering: 'key'`): waiting behind their key's running message, for their
   * retry delay, or for a slot. They count against the intake's room, so a stuck key cannot make it hoard.
   */
  get laneWaitingCount(): number {
    return this.keyOrder?.waiting ?? 0;
  }

  /** Keys blocked by a message that failed for good (`onExhausted: 'block-key'`), oldest first. */
  get blockedKeys(): string[] {
    return this.keyOrder?.blockedKeys ?? [];
  }

  /**
   * Settles the blocked message of `key` as it would have been settled without the block (its dead-letter record
   * written first, then the original acknowledged), then runs the key's next message. Null when `key` is not blocked.
   */
  async unblock(key: string): Promise<SettledEvent | null> {
    const event = (await this.keyOrder?.unblock(key)) ?? null;
    if (event === null) return null;
    try {
      this.options.onSettled?.(event);
    } catch {
      // an observer must not break the intake
    }
    this.pullHeld();
    return event;
  }

  /**
   * Handles no new message until resume(): a message the client still hands over
   * (a receive under way, the native client emptying its receiver queue) is held, unacknowledged, until then.
   * Resolves once every message already being handled has been settled. A pushing client is parked only once
   * `pausedHoldLimit` messages are held: with a zero receiver queue, other topics may share its listener thread.
   */
  async pause(): Promise<void> {
    this.paused = true;
    // A client waiting for the held messages to get a slot goes on: what it pushes now is held for resume().
    this.wakeHeldWaiters();
    this.wakeCrowdWaiters();
    await Promise.all([...this.inFlight]);
  }

  /** Handles messages again: the held ones first, in the order they came. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.wakeResumeWaiters();
    this.pullHeld();
  }

  /** Handlers that passed their time-out and have not ended yet (a stall shows here). */
  get overdueCount(): number {
    return this.overdueHandlers.count;
  }

  /** False while the client is reconnecting the consumer (when the client reports it). */
  isConnected(): boolean {
    return !this.stopping && (this.options.consumer.isConnected?.() ?? true);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const accept = (message: PulsarMessage): PushResult => this.acceptPushed(message);
    if (this.options.feed) {
      this.options.feed.attach(accept, {
        room: () => this.roomForPushed(),
        roomFor: (count) => this.roomForPushedAtLeast(count),
      });
    } else {
      const consumer = this.options.consumer;
      this.pump = startReceivePump<PulsarMessage>({ receive: () => consumer.receive() }, accept);
    }
  }

  /** Stops receiving, waits up to `timeoutMs` for in-flight messages, then closes the consumer. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.options.feed?.close();
    this.pump?.stop();
    this.wakeResumeWaiters();
    // Never handed to a handler: left unacknowledged, the broker redelivers them once the consumer is closed.
    this.held = [];
    // So are those waiting in a lane or for a retry in place (a redelivery continues their count).
    this.keyOrder?.clear();
    this.wakeHeldWaiters();
    this.wakeCrowdWaiters();
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

  private whileResumed(): Promise<void> {
    if (!this.paused || this.stopping) return DONE;
    return new Promise((resolve) => this.resumeWaiters.push(resolve));
  }

  private wakeResumeWaiters(): void {
    const waiters = this.resumeWaiters;
    this.resumeWaiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Hands held messages to handlers, in order, while slots are free: called as a slot frees, so a held message
   * starts at once rather than a turn later. Wakes a waiting client once none is held (or on pause or stop).
   */
  private pullHeld(): void {
    while (this.keyOrder?.hasReady && !this.paused && !this.stopping && this.hasFreeSlot())
      this.track(this.keyOrder.nextReady()!);
    while (this.held.length > 0 && !this.paused && !this.stopping && this.hasFreeSlot())
      this.takeIn(this.held.shift()!);
    if (this.held.length === 0 || this.paused || this.stopping) this.wakeHeldWaiters();
    else this.wakeRoomWaiter();
    if (this.keyOrder !== null && (this.waitingCount() < this.waitingLimit || this.paused || this.stopping))
      this.wakeCrowdWaiters();
  }

  /** Takes a message in: into its key's lane when it has one (it runs now, or waits there), else it runs now. */
  private takeIn(message: PulsarMessage): void {
    if (this.keyOrder === null || this.keyOrder.enter(message)) this.track(message);
  }

  /** Messages taken in and not yet running: held ones, and with lanes those waiting in them or for a retry. */
  private waitingCount(): number {
    return this.held.length + this.laneWaitingCount;
  }

  /** With lanes, while as many messages wait as the limit: resolves once fewer do (or on pause or stop). */
  private whileCrowded(): PushResult {
    if (this.keyOrder === null || this.waitingCount() < this.waitingLimit || this.paused || this.stopping)
      return undefined;
    return new Promise((resolve) => this.crowdWaiters.push(resolve));
  }

  private wakeCrowdWaiters(): void {
    const waiters = this.crowdWaiters;
    this.crowdWaiters = [];
    for (const wake of waiters) wake();
  }

  private wakeHeldWaiters(): void {
    const waiters = this.heldWaiters;
    this.heldWaiters = [];
    for (const wake of waiters) wake();
    this.wakeRoomWaiter();
  }

  private wakeRoomWaiter(): void {
    const waiter = this.roomWaiter;
    if (!waiter) return;
    const room = this.roomForPushed();
    if (room >= waiter.count || room === 0) {
      this.roomWaiter = null;
      waiter.wake();
    }
  }

  /** Resolves once every held message has a slot (or on pause or stop). */
  private heldTaken(): Promise<void> {
    if (this.held.length === 0 || this.paused || this.stopping) return DONE;
    return new Promise((resolve) => this.heldWaiters.push(resolve));
  }

  /**
   * The client's push: processes the message, or holds it (in order) while every slot is taken or the consumer is
   * paused. A promise only when the client must wait: each one holds the client's next receive (or parks the
   * addon's listener thread, with a zero receiver queue) until it settles, so the client is made to wait only once
   * a few messages wait here.
   */
  private acceptPushed(message: PulsarMessage): PushResult {
    if (this.stopping) return undefined; // left unacknowledged: the broker redelivers it after close
    if (!this.paused && this.held.length === 0 && !this.keyOrder?.hasReady && this.hasFreeSlot()) {
      this.takeIn(message);
      // A message that waits in its lane takes no slot but room: past the limit, the client waits.
      return this.whileCrowded();
    }
    this.held.push(message);
    if (!this.paused) {
      this.pullHeld();
      if (this.held.length >= this.waitingLimit) return this.heldTaken();
      return this.whileCrowded();
    }
    // The push returns at once while it can (a listener thread may serve other topics); the native client then asks
    // the broker for more, so past the limit it waits for resume(), and the broker keeps the rest.
    return this.held.length < (this.options.pausedHoldLimit ?? PAUSED_HOLD_LIMIT) ? undefined : this.whileResumed();
  }

  /**
   * How many pushed messages acceptPushed() takes before it returns a promise, that one included: the free slots
   * (while none wait), then the waiting room. None while paused or stopping, when the client takes one at a time.
   */
  private roomForPushed(): number {
    if (this.paused || this.stopping) return 0;
    const free =
      this.held.length === 0 && !this.keyOrder?.hasReady && this.hasFreeSlot()
        ? this.options.concurrency - this.inFlight.size
        : 0;
    return Math.max(0, free + this.waitingLimit - this.waitingCount());
  }

  /** Resolves once roomForPushed() is at least `count`, or once it is 0 for a pause or a stop. */
  private roomForPushedAtLeast(count: number): Promise<void> {
    const room = this.roomForPushed();
    if (room >= count || room === 0) return DONE;
    this.roomWaiter?.wake();
    return new Promise((resolve) => (this.roomWaiter = { count, wake: resolve }));
  }

  /** A slot is free while fewer than `concurrency` run and the overdue handlers are within their bound. */
  private hasFreeSlot(): boolean {
    return this.inFlight.size < this.options.concurrency && this.overdueHandlers.count < this.maxOverdue;
  }

  private get maxOverdue(): number {
    return this.options.maxOverdue ?? 2 * this.options.concurrency;
  }

  private track(message: PulsarMessage): void {
    const tracked: Promise<void> = this.process(message).then(
      (event) => {
        this.keyOrder?.afterRun(message, event);
        this.release(tracked);
        try {
          this.options.onSettled?.(event);
        } catch {
          // an observer must not break the intake
        }
      },
      // processMessage handles its own failures; this is a last line of defence for the intake.
      (error: unknown) => {
        // Not settled: left unacknowledged for redelivery; its key goes on.
        this.keyOrder?.afterRun(message, null);
        this.release(tracked);
        this.options.onLoopError?.(asError(error));
      },
    );
    this.inFlight.add(tracked);
  }

  private process(message: PulsarMessage): Promise<SettledEvent> {
    const keyOrder = this.keyOrder;
    if (keyOrder === null) return processMessage(message, this.context);
    // The key of a handler past its time-out waits until it ends, so one key never has two handlers running.
    const context: ProcessorContext = {
      ...this.context,
      onHandlerOverdue: (urn, timeoutMs, stillRunning) => {
        keyOrder.overdue(message, stillRunning);
        this.overdueHandlers.track(urn, timeoutMs, stillRunning);
      },
    };
    return processMessage(message, context, keyOrder.attemptsOf(message), (unblock) =>
      keyOrder.block(message, unblock),
    );
  }

  private release(tracked: Promise<void>): void {
    this.inFlight.delete(tracked);
    this.pullHeld();
  }

  private readonly reported = new Set<string>();

  private firstReport(key: string): boolean {
    if (this.reported.has(key)) return false;
    // Bounded: the oldest keys are forgotten first.
    if (this.reported.size >= REPORTS_KEPT) this.reported.delete(this.reported.values().next().value!);
    this.reported.add(key);
    return true;
  }
}
