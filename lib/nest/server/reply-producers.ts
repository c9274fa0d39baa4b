import type { PulsarClientLike, PulsarProducer, PulsarProducerMessage } from '../../pulsar/client-types.js';
import { fullTopicName } from '../../pulsar/topic-name.js';

/** How long a reply topic's producer stays open after its last reply. */
export const REPLY_PRODUCER_IDLE_MS = 60_000;

interface Entry {
  producer: Promise<PulsarProducer>;
  lastUsed: number;
}

/**
 * The producers a server answers requests with, one per reply topic. Every caller instance has a reply topic of its
 * own, so a producer left open would keep a gone caller's topic alive on the broker (which deletes a topic only once
 * nothing is connected to it): a producer idle for `idleMs` is closed.
 */
export class ReplyProducers {
  private readonly entries = new Map<string, Entry>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly client: PulsarClientLike,
    private readonly idleMs = REPLY_PRODUCER_IDLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Publishes a reply on `topic` (a failed producer creation is forgotten, so the next reply tries again). */
  async send(topic: string, message: PulsarProducerMessage): Promise<void> {
    if (this.closed) throw new Error('the server is closing: no more replies are sent');
    const key = fullTopicName(topic);
    let entry = this.entries.get(key);
    if (!entry) {
      const producer = this.client.createProducer({ topic: key });
      entry = { producer, lastUsed: this.now() };
      this.entries.set(key, entry);
      producer.catch(() => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      });
      this.startSweeper();
    }
    entry.lastUsed = this.now();
    await (await entry.producer).send(message);
  }

  /** Closes the producers idle for longer than `idleMs`; returns how many. */
  async sweep(): Promise<number> {
    const due = this.now() - this.idleMs;
    const idle = [...this.entries].filter(([, entry]) => entry.lastUsed <= due);
    for (const [key] of idle) this.entries.delete(key);
    await Promise.allSettled(idle.map(async ([, entry]) => (await entry.producer).close()));
    return idle.length;
  }

  /** Reply topics with an open producer (for tests and health checks). */
  get openTopics(): string[] {
    return [...this.entries.keys()];
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(all.map(async (entry) => (await entry.producer).close()));
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep(), Math.max(1000, this.idleMs / 2));
    this.sweeper.unref?.();
  }
}
