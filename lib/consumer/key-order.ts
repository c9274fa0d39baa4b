import type { PulsarMessage } from '../pulsar/client-types.js';
import { BlockedKeys } from './blocked-keys.js';
import { KeyLanes, laneKeyOf } from './key-lanes.js';
import type { SettledEvent } from './processor-context.js';

/** What the key order needs of its intake: whether it stops, and a nudge when a message became ready. */
export interface KeyOrderHost {
  isStopping(): boolean;
  /** A message became ready (a retry delay passed, a handler past its time-out ended): start what can start. */
  wake(): void;
}

/**
 * One intake's `ordering: 'key'` state (docs/scale.md#per-key-order): the lanes by key, the messages ready to run
 * (the next of a lane, a retry whose delay passed), retries in place waiting out their delay, the keys blocked by
 * a message failed for good, and the handlers past their time-out their key waits for.
 */
export class KeyOrder {
  private readonly lanes = new KeyLanes<PulsarMessage>();
  /** Messages that own their lane and wait for a slot; taken before the intake's held ones, since they came first. */
  private ready: PulsarMessage[] = [];
  /** Attempts made here on a message retried in place, so the next run counts on. */
  private readonly attemptsInPlace = new Map<PulsarMessage, number>();
  /** Messages waiting out their retry delay. */
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Messages whose handler passed its time-out: their key waits until the handler ends. */
  private readonly overdueOf = new Map<PulsarMessage, Promise<void>>();
  /** Keys whose message failed for good under `onExhausted: 'block-key'`, waiting for unblock(). */
  private readonly blocked = new BlockedKeys<PulsarMessage>();

  constructor(private readonly host: KeyOrderHost) {}

  /** Messages taken in and not running: waiting behind their key, for their retry delay, for a slot, or blocked. */
  get waiting(): number {
    return this.lanes.waiting + this.ready.length + this.retryTimers.size + this.blocked.size;
  }

  get blockedKeys(): string[] {
    return this.blocked.keys();
  }

  /** Enters a message in its key's lane: true when it runs now (its lane was free, or it has no key). */
  enter(message: PulsarMessage): boolean {
    const key = laneKeyOf(message);
    return key === null || this.lanes.enter(key, message) === 'run';
  }

  /** The next ready message, if any. */
  nextReady(): PulsarMessage | undefined {
    return this.ready.shift();
  }

  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  /** Attempts already made here on `message` (retried in place). */
  attemptsOf(message: PulsarMessage): number {
    return this.attemptsInPlace.get(message) ?? 0;
  }

  /** The handler of `message` passed its time-out: its key waits until `stillRunning` ends. */
  overdue(message: PulsarMessage, stillRunning: Promise<void>): void {
    this.overdueOf.set(message, stillRunning);
  }

  block(message: PulsarMessage, unblock: () => Promise<SettledEvent>): void {
    this.blocked.block(laneKeyOf(message)!, message, unblock);
  }

  /** Unblocks `key`: settles its message as without the block, then its lane goes on. Null when not blocked. */
  async unblock(key: string): Promise<SettledEvent | null> {
    const blocked = this.blocked.take(key);
    if (blocked === undefined) return null;
    const event = await blocked.unblock();
    if (!this.host.isStopping()) this.finish(blocked.message);
    return event;
  }

  /**
   * A lane message ran (`event` null: it was not settled): retried in place, it waits out its delay and runs again
   * (its lane stays busy); blocked, its lane waits for unblock(); otherwise the next message of its key gets its
   * turn. Either waits for a handler still running past its time-out.
   */
  afterRun(message: PulsarMessage, event: SettledEvent | null): void {
    const stillRunning = this.overdueOf.get(message);
    this.overdueOf.delete(message);
    const goOn = (): void => {
      if (this.host.isStopping() || event?.action === 'block') return;
      if (event?.inPlace === true) this.retryLater(message, event.attempt ?? 1, event.retryDelayMs ?? 0);
      else this.finish(message);
    };
    if (stillRunning === undefined) goOn();
    else
      void stillRunning.then(() => {
        goOn();
        this.host.wake();
      });
  }

  /** Forgets every waiting message (on stop: left unacknowledged, a redelivery continues their count). */
  clear(): void {
    this.ready = [];
    this.lanes.clear();
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    this.attemptsInPlace.clear();
    this.blocked.clear();
  }

  private finish(message: PulsarMessage): void {
    this.attemptsInPlace.delete(message);
    const key = laneKeyOf(message);
    const next = key === null ? undefined : this.lanes.finish(key);
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
      if (this.host.isStopping()) return;
      this.ready.unshift(message);
      this.host.wake();
    }, delayMs);
    this.retryTimers.add(timer);
  }
}
