import { BabelQueueError } from '../../envelope/index.js';
import type { PulsarClientLike, PulsarProducer } from '../../pulsar/client-types.js';
import { toLibraryClient } from '../../pulsar/library-client.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import type { ProducerSource } from './producer-settings.js';
import { checkedProducerSettings, producerOptionsFor } from './producer-settings.js';
import type { ProducerOptionsSettings } from '../../pulsar/client-options.js';

/** One pooled producer, as reported to health checks. */
export interface PooledProducerState {
  topic: string;
  /** False while the client reports the producer as reconnecting. */
  connected: boolean;
}

/** `orders` and `persistent://public/default/orders` are the same topic and share a producer. */
// A malformed name is left to the client to accept or reject.
const topicKey = fullTopicName;
/** Topic names already resolved to their key: a publish names its topic each time, and parsing it is not free. */
const KEYS_KEPT = 1_000;

/**
 * Producers created lazily, one per topic, shared by every caller: BabelPulsarClient publishes and the
 * server's retry and dead-letter writes. Concurrent first requests for a topic share one creation; a failed
 * creation is forgotten so the next request tries again. The owner closes the pool (after the server drained).
 */
export class BabelProducerPool implements ProducerSource {
  private readonly producers = new Map<string, Promise<PulsarProducer>>();
  private readonly ready = new Map<string, PulsarProducer>();
  private closing: Promise<void> | null = null;

  private readonly client: PulsarClientLike;
  private readonly settings: ProducerOptionsSettings;

  /**
   * `settings`: Pulsar producer settings for every topic and per topic (docs/pulsar-features.md#client-options),
   * checked here against what the client supports, so that a setting it cannot honour fails at start-up.
   */
  constructor(client: PulsarClientLike, settings: ProducerOptionsSettings = {}) {
    this.settings = checkedProducerSettings(client, settings);
    this.client = toLibraryClient(client);
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.closing !== null;
  }

  producerFor(topic: string): Promise<PulsarProducer> {
    if (this.closing) {
      return Promise.reject(
        new BabelQueueError(`the producer pool is closed: no producer for ${JSON.stringify(topic)} after shutdown`),
      );
    }
    const key = this.keyOf(topic);
    let pending = this.producers.get(key);
    if (!pending) {
      pending = this.client.createProducer({ ...producerOptionsFor(this.settings, key), topic }).then(
        (producer) => {
          if (this.closing) {
            // Created while the pool was closing: close it rather than leak it.
            void producer.close().catch(() => undefined);
            throw new BabelQueueError(
              `the producer pool closed while the producer for ${JSON.stringify(topic)} was being created`,
            );
          }
          this.ready.set(key, producer);
          return producer;
        },
        (error: unknown) => {
          this.producers.delete(key);
          throw error;
        },
      );
      this.producers.set(key, pending);
    }
    return pending;
  }

  private readonly keys = new Map<string, string>();

  private keyOf(topic: string): string {
    let key = this.keys.get(topic);
    if (key === undefined) {
      key = topicKey(topic);
      if (this.keys.size >= KEYS_KEPT) this.keys.clear();
      this.keys.set(topic, key);
    }
    return key;
  }

  /** Producers created so far, with their connection state. */
  describe(): PooledProducerState[] {
    return [...this.ready].map(([topic, producer]) => ({ topic, connected: producer.isConnected?.() ?? true }));
  }

  /** Waits for creations under way, then closes every producer (each failure is ignored). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.producers.values()]);
      const producers = [...this.ready.values()];
      this.ready.clear();
      this.producers.clear();
      await Promise.allSettled(producers.map((producer) => producer.close()));
    })();
    return this.closing;
  }
}
