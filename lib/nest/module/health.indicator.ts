import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { BabelPulsarServer, type BabelServerStatus } from '../server/babel-pulsar.server.js';
import { BabelProducerPool, type PooledProducerState } from '../client/producer-pool.js';
import { BABEL_QUEUE_CLIENT_HANDLE, type ClientHandle } from './module-tokens.js';
import type { SubscriptionState } from '../server/subscription-set.js';
import { callIfPresent } from './stubbed-provider.js';
import { BabelQueuePublisherStart } from '../client/publisher-start.js';
import type { OutboxRelay, OutboxRelayState } from '../../outbox/relay.js';
import type { ScheduleDispatcher, ScheduleDispatcherState } from '../../outbox/schedule-dispatcher.js';

/** What check() reports. */
export interface BabelQueueHealthDetails {
  /** True when the client is open and every producer and consumer is connected. */
  healthy: boolean;
  client: {
    kind: ClientHandle['kind'];
    /** False once closed, or when the client itself reports being disconnected. */
    connected: boolean;
  };
  producers: {
    total: number;
    connected: number;
    topics: PooledProducerState[];
  };
  consumers: {
    /**
     * The server's status; `not-listening` while the server was never started (then it does not count). `paused`
     * (every consumer paused by `server.pause()`) is not a problem: a deliberate state, which a probe that restarts
     * the process would undo.
     */
    status: BabelServerStatus | 'not-listening';
    /**
     * `overdue`: handlers past their time-out that still run (a stall). `paused`: paused by `server.pause()`.
     * `refused`: the topic's retry or dead-letter producers the broker refuses for lack of permission (their writes
     * wait on the broker).
     */
    topics: Array<Omit<SubscriptionState, 'connected'>>;
  };
  /**
   * The outbox relay (absent without one): its counters and the outage under way. A broker or database it cannot
   * reach is a problem; parked rows are not (restarting cannot help them: list and re-queue them).
   */
  outbox?: OutboxRelayState;
  /**
   * The schedule dispatcher (absent where none runs: schedules off, or `relay: false`): messages fired, the latest
   * lateness, and whether its passes fail (a problem: due schedules wait).
   */
  schedules?: ScheduleDispatcherState;
  /** Why the check is down, one line per problem (empty when healthy). */
  problems: string[];
}

/** Terminus' result shape: `{ [key]: { status, ...details } }`. */
export type BabelQueueHealthResult<Key extends string = string> = Record<
  Key,
  { status: 'up' | 'down' } & Omit<BabelQueueHealthDetails, 'healthy'>
>;

/**
 * Reports whether the Pulsar client, the module's producers and the server's consumers are connected. No
 * dependency on @nestjs/terminus, but shaped for it:
 *
 *     @Get('health') @HealthCheck()
 *     check() { return this.health.check([() => this.babel.isHealthy('babelqueue')]); }
 */
@Injectable()
export class BabelQueueHealthIndicator implements OnApplicationShutdown {
  private serverStatus: BabelServerStatus | 'not-listening' = 'not-listening';
  private readonly subscription: Subscription | undefined;

  constructor(
    @Inject(BABEL_QUEUE_CLIENT_HANDLE) private readonly handle: ClientHandle,
    @Inject(BabelProducerPool) private readonly pool: BabelProducerPool,
    @Inject(BabelPulsarServer) private readonly server: BabelPulsarServer,
    // brokerAtStart: 'optional': the publisher's producer still waiting for the broker counts as down.
    @Optional()
    @Inject(BabelQueuePublisherStart)
    private readonly publisherStart: BabelQueuePublisherStart | null = null,
    @Optional() private readonly outboxRelay: OutboxRelay | null = null,
    @Optional() private readonly scheduleDispatcher: ScheduleDispatcher | null = null,
  ) {
    // A test may stand in a plain object for the server (overrideProvider): it then reports no status.
    this.subscription = (server as Partial<BabelPulsarServer>).status?.subscribe((status) => {
      this.serverStatus = status;
    });
  }

  /** Plain details, for logs or a custom endpoint. */
  check(): BabelQueueHealthDetails {
    const problems: string[] = [];
    const clientConnected = !this.handle.closed && this.pool.closed !== true && this.clientReportsConnected();
    if (!clientConnected) problems.push('the Pulsar client is closed or disconnected');

    const producers = callIfPresent<PooledProducerState[]>(this.pool, 'describe', []);
    for (const producer of producers)
      if (!producer.connected) problems.push(`producer for ${producer.topic} is not connected`);
    const publisherProblem = callIfPresent<string | null>(this.publisherStart, 'startProblem', null);
    if (publisherProblem) problems.push(publisherProblem);

    const status = this.serverStatus;
    if (status !== 'not-listening' && status !== 'connected' && status !== 'paused')
      problems.push(`the consumers are ${status}`);
    const topics = callIfPresent<ReturnType<BabelPulsarServer['describe']>>(this.server, 'describe', []);
    for (const { topic, overdue, refused } of topics) {
      if (overdue > 0) problems.push(`${overdue} handler(s) on ${topic} passed their time-out and still run`);
      for (const producer of refused) {
        problems.push(`producer of ${producer.purpose} for ${topic} is refused: ${producer.refused}`);
      }
    }

    const outbox = callIfPresent<OutboxRelayState | null>(this.outboxRelay, 'describe', null);
    if (outbox?.brokerFailingSince != null)
      problems.push(`the outbox relay cannot publish since ${new Date(outbox.brokerFailingSince).toISOString()}`);
    if (outbox?.databaseFailingSince != null)
      problems.push(`the outbox relay's passes fail since ${new Date(outbox.databaseFailingSince).toISOString()}`);

    const schedules = callIfPresent<ScheduleDispatcherState | null>(this.scheduleDispatcher, 'describe', null);
    if (schedules?.failingSince != null)
      problems.push(`the schedule dispatcher's passes fail since ${new Date(schedules.failingSince).toISOString()}`);

    return {
      healthy: problems.length === 0,
      ...(outbox && { outbox }),
      ...(schedules && { schedules }),
      client: { kind: this.handle.kind, connected: clientConnected },
      producers: {
        total: producers.length,
        connected: producers.filter((producer) => producer.connected).length,
        topics: producers,
      },
      consumers: { status, topics },
      problems,
    };
  }

  /** Terminus-shaped result under `key`; `status` is 'down' when any part is disconnected. */
  isHealthy<const Key extends string = 'babelqueue'>(key: Key = 'babelqueue' as Key): BabelQueueHealthResult<Key> {
    const { healthy, ...details } = this.check();
    return { [key]: { status: healthy ? 'up' : 'down', ...details } } as BabelQueueHealthResult<Key>;
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  private clientReportsConnected(): boolean {
    const probe = (this.handle.client as { isConnected?: () => boolean }).isConnected;
    return typeof probe === 'function' ? probe.call(this.handle.client) !== false : true;
  }
}
