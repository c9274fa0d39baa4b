import type { PulsarMessage } from '../pulsar/client-types.js';
import { startReceivePump, type ReceivePump } from '../pulsar/receive-pump.js';
import { HandlerDeadlines } from './handler-timeout.js';
import { BlockedKeys } from './blocked-keys.js';
import { KeyLanes, laneKeyOf } from './key-lanes.js';
import { NackCount } from './nack-count.js';
import { asError } from './hooks.js';
import { processMessage } from './process-message.js';
import type { ProcessorContext, SettledEvent } from './processor-context.js';
import type { PushFeed, PushResult } from './push-feed.js';

export interface TopicConsumerOptions extends Omit<
  ProcessorContext,
  'onHandlerOverdue' | 'firstReport' | 'deadlines' | 'nackCount' | 'retryInPlace'
> {
  /**
   * `'key'`: messages of one key (ordering key, else partition key) run one at a time in the order received, and a
   * failed one is retried in place, before any later message of its key; messages without a key run unordered.
   * Default `'none'`.
   */
  ordering?: 'key' | 'none';
  /** Messages handled at once; the intake is held while every slot is taken and a few more wait. */
  concurrency: number;
  /**
   * Handlers past their time-out (their messages settled, their work still running) that may be alive at once:
   * at this many no new message is taken until one ends. Default: twice `concurrency`.
   */
  maxOverdue?: number;
  /**
   * @deprecated Ignored: a consumer waits for its next message without a time-out and stops by closing (a native
   * receive with a time-out holds one of libuv's pool threads while it waits).
   */
  receiveTimeoutMs?: number;
  /**
   * Messages pushed by the client (`LibraryClient.subscribePush`). Without it the consumer takes them from
   * `consumer` with receive() without a time-out, one at a time, until it closes.
   */
  feed?: PushFeed;
  /**
   * The subscription's receiver queue: while paused, how many pushed messages are held before the client is made to
   * wait (default 1000, the native receiver queue's size), since a client that pushes asks the broker for more as
   * each push returns. It also caps the messages that wait for a slot, so a small queue keeps a slow consumer from
   * holding back more than it says.
   */
  pausedHoldLimit?: number;
  onSettled?(event: SettledEvent): void;
  onLoopError?(error: Error): void;
}

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
  /** Handlers past their time-out that still run: their messages are settled, their work is not. */
  private overdue = 0;
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
  /** With `ordering: 'key'`: the lanes, by key. */
  private readonly lanes: KeyLanes<PulsarMessage> | null;
  /**
   * Messages that own their lane (or have none) and wait for a slot: the next of a lane whose message was settled,
   * a message whose retry delay has passed. Taken before `held`, since they came first.
   */
  private ready: PulsarMessage[] = [];
  /** Attempts made here on a message retried in place, so the next run counts on. */
  private readonly attemptsInPlace = new Map<PulsarMessage, number>();
  /** Messages waiting out their retry delay. */
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Messages whose handler passed its time-out: their key waits until the handler ends. */
  private readonly overdueOf = new Map<PulsarMessage, Promise<void>>();
  /** With `blockExhausted`: keys whose message failed for good, waiting for unblock() (see BlockedKeys). */
  private readonly blocked = new BlockedKeys<PulsarMessage>();
  /** Lane messages and retries waiting (see waitingCount): the client is woken once they are fewer than its limit. */
  private crowdWaiters: Array<() => void> = [];

  private readonly context: ProcessorContext;
  /** Pushed messages that may wait for a slot before the client is made to wait: never more than its queue. */
  private readonly waitingLimit: number;

  constructor(private readonly options: TopicConsumerOptions) {
    this.waitingLimit = Math.min(
      Math.max(options.concurrency, WAITING_LIMIT),
      options.pausedHoldLimit ?? Number.POSITIVE_INFINITY,
    );
    this.context = {
      ...options,
      onHandlerOverdue: (urn, timeoutMs, stillRunning) => this.trackOverdue(urn, timeoutMs, stillRunning),
      firstReport: (key) => this.firstReport(key),
      deadlines: new HandlerDeadlines(),
      nackCount: new NackCount(),
      retryInPlace: options.ordering === 'key',
    };
    this.lanes = options.ordering === 'key' ? new KeyLanes<PulsarMessage>() : null;
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
    return (this.lanes?.waiting ?? 0) + this.ready.length + this.retryTimers.size + this.blocked.size;
  }

  /** Keys blocked by a message that failed for good (`onExhausted: 'block-key'`), oldest first. */
  get blockedKeys(): string[] {
    return this.blocked.keys();
  }

  /**
   * Settles the blocked message of `key` as it would have been settled without the block (its dead-letter record
   * written first, then the original acknowledged), then runs the key's next message. Null when `key` is not blocked.
   */
  async unblock(key: string): Promise<SettledEvent | null> {
    const blocked = this.blocked.take(key);
    if (blocked === undefined) return null;
    const event = await blocked.unblock();
    try {
      this.options.onSettled?.(event);
    } catch {
      // an observer must not break the intake
    }
    if (this.stopping) return event;
    this.finishInLane(blocked.message);
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
    return this.overdue;
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
    this.ready = [];
    this.lanes?.clear();
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    this.attemptsInPlace.clear();
    this.blocked.clear();
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
    while (this.ready.length > 0 && !this.paused && !this.stopping && this.hasFreeSlot())
      this.track(this.ready.shift()!);
    while (this.held.length > 0 && !this.paused && !this.stopping && this.hasFreeSlot())
      this.takeIn(this.held.shift()!);
    if (this.held.length === 0 || this.paused || this.stopping) this.wakeHeldWaiters();
    else this.wakeRoomWaiter();
    if (this.lanes !== null && (this.waitingCount() < this.waitingLimit || this.paused || this.stopping))
      this.wakeCrowdWaiters();
  }

  /** Takes a message in: into its key's lane when it has one (it runs now, or waits there), else it runs now. */
  private takeIn(message: PulsarMessage): void {
    const key = this.lanes === null ? null : laneKeyOf(message);
    if (key !== null && this.lanes!.enter(key, message) === 'wait') return;
    this.track(message);
  }

  /** Messages taken in and not yet running: held ones, and with lanes those waiting in them or for a retry. */
  private waitingCount(): number {
    return this.held.length + this.laneWaitingCount;
  }

  /** With lanes, while as many messages wait as the limit: resolves once fewer do (or on pause or stop). */
  private whileCrowded(): PushResult {
    if (this.lanes === null || this.waitingCount() < this.waitingLimit || this.paused || this.stopping)
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
    if (!this.paused && this.held.length === 0 && this.ready.length === 0 && this.hasFreeSlot()) {
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
      this.held.length === 0 && this.ready.length === 0 && this.hasFreeSlot()
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
    return this.inFlight.size < this.options.concurrency && this.overdue < this.maxOverdue;
  }

  private get maxOverdue(): number {
    return this.options.maxOverdue ?? 2 * this.options.concurrency;
  }

  private track(message: PulsarMessage): void {
    const tracked: Promise<void> = this.process(message).then(
      (event) => {
        if (this.lanes !== null) this.afterLaneRun(message, event);
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
        if (this.lanes !== null) this.afterLaneRun(message, null);
        this.release(tracked);
        this.options.onLoopError?.(asError(error));
      },
    );
    this.inFlight.add(tracked);
  }

  private process(message: PulsarMessage): Promise<SettledEvent> {
    if (this.lanes === null) return processMessage(message, this.context);
    // The key of a handler past its time-out waits until it ends, so one key never has two handlers running.
    const context: ProcessorContext = {
      ...this.context,
      onHandlerOverdue: (urn, timeoutMs, stillRunning) => {
        this.overdueOf.set(message, stillRunning);
        this.trackOverdue(urn, timeoutMs, stillRunning);
      },
    };
    return processMessage(message, context, this.attemptsInPlace.get(message) ?? 0, (unblock) =>
      this.blocked.block(laneKeyOf(message)!, message, unblock),
    );
  }

  /**
   * A lane message ran: retried in place, it waits out its delay and runs again (its lane stays busy); otherwise
   * the next message of its key gets its turn. Either waits for a handler still running past its time-out.
   */
  private afterLaneRun(message: PulsarMessage, event: SettledEvent | null): void {
    const stillRunning = this.overdueOf.get(message);
    this.overdueOf.delete(message);
    const goOn = (): void => {
      if (this.stopping) return;
      // A blocked message keeps its lane busy until unblock().
      if (event?.action === 'block') return;
      if (event?.inPlace === true) this.retryLater(message, event.attempt ?? 1, event.retryDelayMs ?? 0);
      else this.finishInLane(message);
    };
    if (stillRunning === undefined) goOn();
    else
      void stillRunning.then(() => {
        goOn();
        this.pullHeld();
      });
  }

  private finishInLane(message: PulsarMessage): void {
    this.attemptsInPlace.delete(message);
    const key = laneKeyOf(message);
    const next = key === null ? undefined : this.lanes!.finish(key);
    if (next !== undefined) this.ready.push(next);
  }

  private retryLater(message: PulsarMessage, attempt: number, delayMs: number): void {
    this.attemptsInPlace.set(message, attempt);
    // The retry runs before anything that waits for a slot: its key's later messages wait behind it anyway.
    if (delayMs <= 0) {
      this.ready.unshift(message);
      return;
    }
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      if (this.stopping) return;
      this.ready.unshift(message);
      this.pullHeld();
    }, delayMs);
    this.retryTimers.add(timer);
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

  private trackOverdue(urn: string, timeoutMs: number, stillRunning: Promise<void>): void {
    this.overdue += 1;
    const since = Date.now();
    this.options.logger.warn(
      `handler for ${urn} on ${this.topic} did not settle within ${timeoutMs} ms: counted as a failed attempt ` +
        `and its message settled; the handler still runs (${this.overdue} overdue on this topic)`,
    );
    if (this.overdue === this.maxOverdue)
      this.options.logger.warn(
        `${this.overdue} handlers on ${this.topic} are past their time-out and still run (maxOverdueHandlers): ` +
          'no message is taken until one of them ends (status stalled)',
      );
    void stillRunning.then(() => {
      const wasFull = this.overdue >= this.maxOverdue;
      this.overdue -= 1;
      this.options.logger.warn(
        `overdue handler for ${urn} on ${this.topic} ended ${Date.now() - since} ms after its time-out; ` +
          `its result was ignored${wasFull ? '; taking messages again' : ''}`,
      );
      this.pullHeld();
    });
  }
}
