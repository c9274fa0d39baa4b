import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { ConsumerLogger } from '../../consumer/index.js';
import { NativeClientMissingError } from '../../pulsar/client-factory.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import { BrokerWait } from './broker-wait.js';

/** The part of BabelPulsarClient this needs (a test's stand-in without it is left alone). */
interface Connectable {
  connect(): Promise<unknown>;
  readonly closed?: boolean;
}

const fullTopic = fullTopicName;

const isConnectable = (value: unknown): value is Connectable =>
  typeof (value as Partial<Connectable> | null)?.connect === 'function';

/** The two lines of a publisher whose broker did not answer at start (pure), beside the consumers' lines. */
export const publisherLines = {
  waiting: (topic: string, reason: string): string =>
    `the broker did not answer at start (${reason}); the app runs, but publishing to ${topic} fails (a ` +
    'PublishError within publishTimeoutMs) until its producer connects, once the broker answers',
  connected: (topic: string, waitedMs: number): string =>
    `the broker answered after ${Math.round(waitedMs / 100) / 10} s: publishing to ${topic}`,
};

/**
 * With `brokerAtStart: 'optional'`, connects the module's publisher to its default topic once the application is
 * up, without holding the start-up: while the broker does not answer it logs one line, retries in the background,
 * and logs one more when the producer is connected. Nothing happens with `'required'` (a producer is created
 * on the first publish, as ever) or without a default topic (no producer is known before a publish names one).
 */
export class BabelQueuePublisherStart implements OnApplicationBootstrap, OnApplicationShutdown {
  private wait: BrokerWait | null = null;
  private first: Promise<void> | null = null;
  private stopped = false;
  /** What health reports while the producer waits for the broker; null otherwise. */
  private problem: string | null = null;

  constructor(
    private readonly publisher: unknown,
    private readonly settings: { brokerAtStart: 'required' | 'optional'; topic: string | undefined },
    private readonly logger: ConsumerLogger = new Logger('BabelPulsarClient'),
  ) {}

  onApplicationBootstrap(): void {
    const { publisher } = this;
    const { topic, brokerAtStart } = this.settings;
    if (brokerAtStart !== 'optional' || topic === undefined || !isConnectable(publisher)) return;
    const since = Date.now();
    // Not awaited: the broker's absence must not hold the application's start-up.
    this.first = publisher.connect().then(
      () => undefined,
      (error: unknown) => {
        if (this.stopped || publisher.closed) return;
        const shown = fullTopic(topic);
        // No wait for the broker cures a missing pulsar-client: say so once instead of retrying for ever.
        if (error instanceof NativeClientMissingError) {
          this.problem = `the publisher's producer for ${shown} cannot be created: ${error.message}`;
          this.logger.error(error.message);
          return;
        }
        this.wait = new BrokerWait(
          {
            attempt: async () => {
              await publisher.connect();
            },
            onWaiting: (first) => {
              this.problem = `the publisher's producer for ${shown} is not connected (the broker did not answer at start)`;
              this.logger.warn(publisherLines.waiting(shown, first.message));
            },
            onConnected: () => {
              this.problem = null;
              this.logger.log(publisherLines.connected(shown, Date.now() - since));
            },
          },
          error instanceof Error ? error : new Error(String(error)),
        );
      },
    );
  }

  /** Stops the retries (the publisher itself is closed by the module's lifecycle). */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.wait?.stop();
  }

  /** For health: why the publisher is not ready while it waits for the broker, else null. */
  startProblem(): string | null {
    return this.problem;
  }

  /** Settles once the first attempt has ended (for tests and an orderly close). */
  settled(): Promise<void> {
    return this.first ?? Promise.resolve();
  }
}
