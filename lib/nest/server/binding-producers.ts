import type { ConsumerLogger } from '../../consumer/index.js';
import type { PulsarClientLike, PulsarProducer } from '../../pulsar/client-types.js';
import type { PulsarProducerOptions } from '../../pulsar/client-options.js';
import {
  DeferredProducer,
  isNotAuthorized,
  ProducerNotAuthorizedError,
  type ProducerPurpose,
} from './refused-producer.js';
import type { ProducerSource } from './server-options.js';

/** A refused producer is asked for again this often (and on the next write after it). */
const REFUSED_PRODUCER_RETRY_MS = 2000;

/**
 * The retry and dead-letter producers of one consumed topic: taken from the module's pool or created (and then
 * owned, closed with the binding). A producer the broker refuses for lack of permission becomes a
 * DeferredProducer: the topic is consumed anyway, and each message that needs the write stays on the broker
 * until the permission is granted.
 */
export class BindingProducers {
  /** What the binding closes when it stops. */
  readonly owned: PulsarProducer[] = [];
  /** The producers the broker refused, while it refuses them. */
  readonly deferred: DeferredProducer[] = [];

  constructor(
    private readonly topic: string,
    private readonly client: PulsarClientLike,
    private readonly pool: ProducerSource | undefined,
    private readonly logger: ConsumerLogger,
    /** The full name of a topic, for messages. */
    private readonly fullName: (topic: string) => string,
    /** The Pulsar settings of a producer the binding creates itself on `topic`. */
    private readonly settingsFor: (topic: string) => PulsarProducerOptions = () => ({}),
  ) {}

  /** A producer on `target` for `purpose`; rejects only for a failure other than a refused permission. */
  async acquire(target: string, purpose: ProducerPurpose): Promise<PulsarProducer> {
    try {
      const producer = await this.create(target);
      if (!this.pool) this.owned.push(producer);
      return producer;
    } catch (error) {
      if (!isNotAuthorized(error)) throw error;
      return this.defer(target, purpose, error);
    }
  }

  /** Closes what was created here (after a failed start, or when the binding stops). */
  async closeOwned(): Promise<void> {
    await Promise.allSettled(this.owned.map((producer) => producer.close()));
  }

  private create(target: string): Promise<PulsarProducer> {
    return this.pool
      ? this.pool.producerFor(target)
      : this.client.createProducer({ ...this.settingsFor(target), topic: target });
  }

  private defer(target: string, purpose: ProducerPurpose, error: unknown): PulsarProducer {
    const full = this.fullName(target);
    const refusal = new ProducerNotAuthorizedError(full, purpose, error);
    this.logger.error(
      `${refusal.message}. Consuming ${this.topic} anyway: messages that need ${purpose} are negatively ` +
        'acknowledged and stay on the broker (never acknowledged without their replacement); health reports ' +
        'the refused producer until the permission is granted',
    );
    const producer = new DeferredProducer(full, purpose, () => this.create(target), refusal, {
      retryEveryMs: REFUSED_PRODUCER_RETRY_MS,
      owns: !this.pool,
      retryInBackground: true,
      onCreated: (created) =>
        this.logger.log(`producer for ${created} created: ${purpose} of ${this.topic} are written again`),
    });
    this.owned.push(producer);
    this.deferred.push(producer);
    return producer;
  }
}
