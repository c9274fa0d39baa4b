/**
 * Batch handlers (docs/pulsar-features.md#batch-handlers): messages that passed inspection are gathered into a
 * batch, the handler runs once for the batch, and each message is then settled on its own from its own result.
 * This file decides nothing about settlement: it only groups the deliveries and hands each one its verdict.
 */

/** `@BabelHandler(urn, { batch })`: how many messages a batch holds at most and how long it waits to fill. */
export interface BatchOptions {
  /** Largest batch; the batch is handed over as soon as it holds this many. Default 100. */
  maxMessages?: number;
  /** How long the first message of a batch waits for more, ms; 0 = take what arrived in the same turn. Default 50. */
  maxWaitMs?: number;
}

export type ResolvedBatchOptions = Required<BatchOptions>;

export const BATCH_DEFAULTS: ResolvedBatchOptions = { maxMessages: 100, maxWaitMs: 50 };
const MAX_BATCH_MESSAGES = 10_000;
const MAX_BATCH_WAIT_MS = 600_000;
const BATCH_KEYS = ['maxMessages', 'maxWaitMs'] as const;

/** Validates `batch` (undefined stays undefined); `where` names the option in the error. */
export function checkBatchOptions(value: unknown, where: string): ResolvedBatchOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError(`${where} must be an object such as { maxMessages: 100, maxWaitMs: 50 }, got ${String(value)}`);
  const unknown = Object.keys(value).filter((key) => !(BATCH_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0)
    throw new TypeError(`${where} option(s) ${unknown.join(', ')} unknown; allowed: ${BATCH_KEYS.join(', ')}`);
  const { maxMessages = BATCH_DEFAULTS.maxMessages, maxWaitMs = BATCH_DEFAULTS.maxWaitMs } = value as BatchOptions;
  if (!(Number.isInteger(maxMessages) && maxMessages >= 1 && maxMessages <= MAX_BATCH_MESSAGES))
    throw new RangeError(
      `${where}.maxMessages must be an integer from 1 to ${MAX_BATCH_MESSAGES}, got ${String(maxMessages)}`,
    );
  if (!(Number.isInteger(maxWaitMs) && maxWaitMs >= 0 && maxWaitMs <= MAX_BATCH_WAIT_MS))
    throw new RangeError(
      `${where}.maxWaitMs must be a whole number of ms from 0 to ${MAX_BATCH_WAIT_MS}, got ${String(maxWaitMs)}`,
    );
  return { maxMessages, maxWaitMs };
}

/**
 * What a batch run reports: `failed` maps the index of each message that failed to its error; every other
 * message succeeded. A run that throws fails every message of the batch with that error.
 */
export interface BatchVerdict {
  failed: ReadonlyMap<number, unknown>;
}

interface Waiting<Item> {
  item: Item;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Gathers items until `maxMessages` are waiting or the first has waited `maxWaitMs`, then runs the batch. Each
 * `add` resolves when its item succeeded and rejects with its own error, so whoever awaits it settles that one
 * message exactly as it settles a message of a single-message handler.
 */
export class BatchCollector<Item> {
  private waiting: Array<Waiting<Item>> = [];
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly options: ResolvedBatchOptions,
    private readonly run: (items: readonly Item[]) => Promise<BatchVerdict>,
  ) {}

  /** How many items wait for their batch to be handed over. */
  get pending(): number {
    return this.waiting.length;
  }

  add(item: Item): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.closed || this.waiting.length >= this.options.maxMessages) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  /** Hands over what waits now; later items are each handed over at once (used when the consumer stops). */
  close(): void {
    this.closed = true;
    this.flush();
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.waiting.splice(0, this.options.maxMessages);
    if (this.waiting.length > 0) this.timer = setTimeout(() => this.flush(), this.options.maxWaitMs);
    if (batch.length === 0) return;
    void BatchCollector.settle(batch, () => this.run(batch.map(({ item }) => item)));
  }

  private static async settle<Item>(batch: Array<Waiting<Item>>, run: () => Promise<BatchVerdict>): Promise<void> {
    let failed: ReadonlyMap<number, unknown>;
    try {
      ({ failed } = await run());
    } catch (error) {
      for (const member of batch) member.reject(error);
      return;
    }
    batch.forEach((member, index) => (failed.has(index) ? member.reject(failed.get(index)) : member.resolve()));
  }
}
