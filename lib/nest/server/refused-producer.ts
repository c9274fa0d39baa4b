import { BabelQueueError } from '../../envelope/index.js';
import type { PulsarMessageId, PulsarProducer, PulsarProducerMessage } from '../../pulsar/client-types.js';

/** What the server's retry or dead-letter producer writes. */
export type ProducerPurpose = 'retry copies' | 'dead-letter records';

/**
 * The broker refused a producer because the client's role may not produce to the topic (authorization, not
 * authentication: the same token consumes). `topic` is the topic as the server asked for it.
 */
export class ProducerNotAuthorizedError extends BabelQueueError {
  override readonly name = 'ProducerNotAuthorizedError';

  constructor(
    readonly topic: string,
    readonly purpose: ProducerPurpose,
    cause: unknown,
  ) {
    super(
      `not authorized to produce to ${topic} (the client's role lacks the "produce" permission there, needed for ` +
        `${purpose}; grant it, e.g. pulsar-admin topics grant-permission --role <role> --actions produce ${topic}): ` +
        reasonOf(cause),
      { cause },
    );
  }
}

const reasonOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);

export { isNotAuthorized } from '../../pulsar/client-errors.js';
import { isNotAuthorized } from '../../pulsar/client-errors.js';

/** Health view of a producer the server could not create. */
export interface RefusedProducerState {
  topic: string;
  purpose: ProducerPurpose;
  /** The refusal, while it lasts; null once the producer was created. */
  refused: string | null;
}

/**
 * Stands in for a retry or dead-letter producer the broker refused at start-up for lack of permission. Every
 * send first tries to create the real producer again (at most once per `retryEveryMs`); until that works it
 * rejects with the ProducerNotAuthorizedError, so the message is negatively acknowledged, never acknowledged
 * without its replacement (docs/contract.md#settlement). Once the permission is granted the next send creates the producer and writes through it.
 * With `retryInBackground` it also asks every `retryEveryMs` while no send does, so that health turns up after a
 * grant on its own, not only when a message next needs the producer.
 */
export class DeferredProducer implements PulsarProducer {
  private producer: PulsarProducer | null = null;
  private creating: Promise<PulsarProducer> | null = null;
  private lastAttempt: number;
  private closed = false;
  refusal: ProducerNotAuthorizedError | null;

  constructor(
    private readonly topic: string,
    readonly purpose: ProducerPurpose,
    private readonly create: () => Promise<PulsarProducer>,
    firstRefusal: ProducerNotAuthorizedError,
    private readonly options: {
      retryEveryMs: number;
      /** Close the created producer with this one (false when a shared pool owns it). */
      owns: boolean;
      onCreated?: (topic: string) => void;
      now?: () => number;
      retryInBackground?: boolean;
    },
  ) {
    this.refusal = firstRefusal;
    this.lastAttempt = this.now();
    if (options.retryInBackground) this.retryUntilCreated();
  }

  private retryTimer: NodeJS.Timeout | undefined;

  private retryUntilCreated(): void {
    this.retryTimer = setInterval(() => {
      if (this.producer || this.closed) {
        clearInterval(this.retryTimer);
        return;
      }
      // A refusal is recorded by attempt() (health reads it); anything else shows on the next send.
      if (!this.creating) this.attempt().catch(() => undefined);
    }, this.options.retryEveryMs);
    // Health polling must not keep a process alive that is otherwise done.
    this.retryTimer.unref();
  }

  async send(message: PulsarProducerMessage): Promise<PulsarMessageId | null> {
    return (await this.ready()).send(message);
  }

  async flush(): Promise<null | void> {
    await this.producer?.flush();
  }

  async close(): Promise<null | void> {
    this.closed = true;
    clearInterval(this.retryTimer);
    if (this.producer && this.options.owns) await this.producer.close();
  }

  getTopic(): string {
    return this.producer?.getTopic() ?? this.topic;
  }

  /** False until the producer exists (health counts a refused producer as down). */
  isConnected(): boolean {
    return this.producer ? (this.producer.isConnected?.() ?? true) : false;
  }

  state(): RefusedProducerState {
    return { topic: this.topic, purpose: this.purpose, refused: this.refusal?.message ?? null };
  }

  private ready(): Promise<PulsarProducer> {
    if (this.producer) return Promise.resolve(this.producer);
    if (this.closed) return Promise.reject(new BabelQueueError(`the producer for ${this.topic} is closed`));
    if (this.creating) return this.creating;
    if (this.now() - this.lastAttempt < this.options.retryEveryMs) return Promise.reject(this.refusal);
    return this.attempt();
  }

  private attempt(): Promise<PulsarProducer> {
    this.lastAttempt = this.now();
    this.creating = this.create().then(
      (producer) => {
        this.creating = null;
        if (this.closed) {
          if (this.options.owns) void producer.close().catch(() => undefined);
          throw new BabelQueueError(`the producer for ${this.topic} is closed`);
        }
        this.producer = producer;
        this.refusal = null;
        this.options.onCreated?.(this.topic);
        return producer;
      },
      (error: unknown) => {
        this.creating = null;
        // Still refused: the same report. Anything else (the broker unreachable…) is passed on as it is.
        if (!isNotAuthorized(error)) throw error;
        this.refusal = new ProducerNotAuthorizedError(this.topic, this.purpose, error);
        throw this.refusal;
      },
    );
    return this.creating;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}
