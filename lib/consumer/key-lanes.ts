/** What to do with a message that enters its key's lane. */
export type LaneEntry = 'run' | 'wait';

/**
 * One lane per key (pure, no timers, no I/O): a key's messages run one at a time, in the order they entered.
 * The first message of an idle key runs at once; the others wait behind it. When the running one is done for good
 * (acknowledged, dead-lettered, dropped), `finish` hands over the next of that key, which then runs. A message
 * retried in place keeps its lane busy: the caller simply does not call `finish` until it is settled.
 */
export class KeyLanes<T> {
  /** Keys with a running message; the queue holds those that wait behind it. */
  private readonly lanes = new Map<string, T[]>();
  private waitingCount = 0;

  /** A message of `key` arrives: `run` when its key is idle (the lane is now busy), else it waits in the lane. */
  enter(key: string, item: T): LaneEntry {
    const waiting = this.lanes.get(key);
    if (waiting === undefined) {
      this.lanes.set(key, []);
      return 'run';
    }
    waiting.push(item);
    this.waitingCount += 1;
    return 'wait';
  }

  /**
   * The running message of `key` is done for good: the next of that key, which now runs (its lane stays busy), or
   * undefined when none waits (the key is idle again).
   */
  finish(key: string): T | undefined {
    const waiting = this.lanes.get(key);
    if (waiting === undefined) return undefined;
    const next = waiting.shift();
    if (next === undefined) {
      this.lanes.delete(key);
      return undefined;
    }
    this.waitingCount -= 1;
    return next;
  }

  /** Messages waiting behind a running one, all keys together. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Keys with a running message (or one waiting for its retry). */
  get busyKeys(): number {
    return this.lanes.size;
  }

  /** Whether a message of `key` runs or waits for its retry. */
  isBusy(key: string): boolean {
    return this.lanes.has(key);
  }

  /** Forgets every lane (on stop: what waited is left unacknowledged, for redelivery); returns what waited. */
  clear(): T[] {
    const left = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.waitingCount = 0;
    return left;
  }
}

/** A message's lane key: its ordering key when set, else its partition key; null (no lane) when both are empty. */
export function laneKeyOf(message: { getPartitionKey(): string; getOrderingKey?(): string }): string | null {
  const ordering = message.getOrderingKey?.() ?? '';
  if (ordering !== '') return ordering;
  const partition = message.getPartitionKey();
  return partition ? partition : null;
}
