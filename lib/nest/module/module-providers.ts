import {
  Inject,
  Injectable,
  type InjectionToken,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, ModulesContainer } from '@nestjs/core';
import type { BabelQueueHooks } from '../../consumer/index.js';
import { BabelQueueError } from '../../envelope/index.js';
import { LazyPulsarClient } from '../../pulsar/lazy-client.js';
import { BabelPulsarClient } from '../client/babel-pulsar.client.js';
import { BabelPulsarServer } from '../server/babel-pulsar.server.js';
import { BabelQueueRedrive } from '../../redrive/babel-queue-redrive.js';
import { BabelQueueHealthIndicator } from './health.indicator.js';
import { HOOK_NAMES, type HookName } from './hooks-option.js';
import { resolveModuleOptions, type ResolvedModuleOptions } from './module-options.js';
import {
  BABEL_QUEUE_CLIENT_HANDLE,
  BABEL_QUEUE_KIT_SCHEDULES,
  BABEL_QUEUE_RESOLVED_OPTIONS,
  type ClientHandle,
} from './module-tokens.js';
import { BabelProducerPool } from '../client/producer-pool.js';
import type { BabelPulsarServerOptions } from '../server/server-options.js';
import {
  BABEL_QUEUE_NAME,
  getBabelClientToken,
  getBabelProducerPoolToken,
  getBabelHealthIndicatorToken,
  getBabelOutboxRelayToken,
  getBabelOutboxToken,
  getBabelRedriveToken,
  getBabelServerToken,
  getPulsarClientToken,
  type RegistrationName,
} from './registration-tokens.js';
import { BabelQueueStartupCheck } from './startup-check.js';
import { BabelQueuePublisherStart } from '../client/publisher-start.js';
import { closeIfClosable } from './stubbed-provider.js';
import { BabelOutbox, type BabelOutboxOptions } from '../../outbox/outbox.js';
import { OutboxRelay } from '../../outbox/relay.js';
import { outboxMigrationSql } from '../../outbox/table.js';
import { ScheduleDispatcher } from '../../outbox/schedule-dispatcher.js';
import { scheduleMigrationSql } from '../../outbox/schedule-table.js';
import { attachClientSchedules, type ClientSchedules } from '../client/client-schedules.js';
import { clientSchedulesOn } from './client-schedules-port.js';
import { scanDeclaredSchedules, type DeclaredSchedule } from './declared-schedules.js';
import type { DeclaredScheduleOptions } from '../../schedule/index.js';
import { BabelQueueOptionsError } from './options-error.js';
import { errorText } from '../../envelope/error-text.js';

/**
 * Resolves a hooks class through DI: the instance registered anywhere in the application when there is one,
 * else one created in the module's scope. Resolved once all providers exist (onModuleInit), or on first use.
 */
@Injectable()
export class BabelQueueHooksHost implements OnModuleInit {
  private instance: Promise<BabelQueueHooks> | null = null;

  constructor(
    @Inject(BABEL_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.options.hooks.kind === 'class') await this.resolve();
  }

  /** The hook functions to give the server (only those the hooks define, so defaults stay intact). */
  serverHooks(): Pick<BabelPulsarServerOptions, HookName> {
    const hooks = this.options.hooks;
    const result: Record<string, unknown> = {};
    if (hooks.kind === 'object') {
      for (const name of HOOK_NAMES) {
        const fn = hooks.hooks[name];
        if (typeof fn === 'function') result[name] = fn.bind(hooks.hooks);
      }
    } else if (hooks.kind === 'class') {
      for (const name of hooks.methods) {
        result[name] = async (...args: unknown[]) => {
          const instance = (await this.resolve()) as unknown as Record<string, (...a: unknown[]) => unknown>;
          return instance[name]!(...args);
        };
      }
    }
    return result as Pick<BabelPulsarServerOptions, HookName>;
  }

  private resolve(): Promise<BabelQueueHooks> {
    const hooks = this.options.hooks;
    if (hooks.kind !== 'class') return Promise.resolve({});
    const pending = (this.instance ??= (async (): Promise<BabelQueueHooks> => {
      try {
        return this.moduleRef.get<BabelQueueHooks>(hooks.type, { strict: false });
      } catch {
        try {
          return await this.moduleRef.create(hooks.type);
        } catch (error) {
          this.instance = null;
          throw new BabelQueueError(
            `BabelQueueModule could not create the hooks class ${hooks.type.name}: register it as a provider in one of your ` +
              `modules, or make its dependencies available to BabelQueueModule (global modules or forRootAsync imports). ` +
              `${errorText(error)}`,
            { cause: error },
          );
        }
      }
    })());
    return pending;
  }
}

/**
 * Shuts the module down in the one safe order, whatever order Nest calls the hooks in: the server first (it
 * stops receiving and lets in-flight messages settle, their retry and dead-letter writes still having their
 * producers), then the publisher, the producer pool, and last the Pulsar client when the module created it.
 */
@Injectable()
export class BabelQueueLifecycle implements OnApplicationShutdown {
  private readonly logger = new Logger('BabelQueueModule');
  private closing: Promise<void> | null = null;

  constructor(
    @Inject(BabelPulsarServer) private readonly server: BabelPulsarServer,
    @Inject(BabelPulsarClient) private readonly publisher: BabelPulsarClient,
    @Inject(BabelProducerPool) private readonly pool: BabelProducerPool,
    @Inject(BABEL_QUEUE_CLIENT_HANDLE) private readonly handle: ClientHandle,
    private readonly outboxRelay: OutboxRelay | null = null,
  ) {}

  onApplicationShutdown(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // A standalone microservice and a hybrid app both closed the server already; this wait covers any other order.
    // Any of them may be a test's stand-in (overrideProvider(...).useValue({...})): close what can be closed.
    await closeIfClosable(this.server);
    // The relay's pass under way finishes (its rows marked) while its producers still exist.
    await this.outboxRelay?.stop();
    await closeIfClosable(this.publisher);
    await closeIfClosable(this.pool);
    if (this.handle?.owned) {
      try {
        await this.handle.client.close();
      } catch (error) {
        this.logger.warn(`closing the Pulsar client failed: ${errorText(error)}`);
      }
    }
    if (this.handle) this.handle.closed = true;
  }
}

/**
 * Creates the outbox table (and the schedule table) when asked to, then starts the module's outbox relay and,
 * beside it, the schedule dispatcher once the application is up; stops the dispatcher on shutdown.
 */
@Injectable()
export class BabelQueueOutboxHost implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Moves due schedules into the outbox; only where the relay runs and schedules are on. */
  readonly dispatcher: ScheduleDispatcher | null;

  constructor(
    private readonly options: ResolvedModuleOptions,
    private readonly relay: OutboxRelay | null,
    private readonly outbox: BabelOutbox,
    /** The @BabelSchedule declarations this registration stores (the unnamed registration's: all of them). */
    private readonly declarations: () => DeclaredSchedule[],
    /** The testing kit's schedules: then nothing touches a database (no migration), declarations go to the kit. */
    private readonly kit: KitSchedules | null = null,
  ) {
    const { pool, schedules, table } = options.outbox;
    this.dispatcher =
      pool && schedules && relay
        ? new ScheduleDispatcher({
            pool,
            table: schedules.table,
            outboxTable: table,
            onFired: () => relay.wake(),
            ...(options.telemetry !== undefined && { metrics: options.telemetry.metrics }),
            ...schedules.tuning,
          })
        : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { pool, migrate, table, schedules } = this.options.outbox;
    if (pool && migrate && !this.kit) {
      const connection = await pool.connect();
      try {
        // Instances starting together would race on CREATE TABLE IF NOT EXISTS (PostgreSQL then fails one with a
        // duplicate pg_type row): a transaction-scoped advisory lock on the table's name lets one migrate at a time.
        await connection.query('BEGIN');
        await connection.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`babelqueue-migrate:${table}`]);
        await connection.query(outboxMigrationSql(table));
        if (schedules) await connection.query(scheduleMigrationSql(schedules.table, table));
        await connection.query('COMMIT');
      } catch (error) {
        await connection.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    }
    await this.declareSchedules();
    this.relay?.start();
    this.dispatcher?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher?.stop();
  }

  /** Stores (or brings up to date) every @BabelSchedule, before any dispatcher of this instance runs. */
  private async declareSchedules(): Promise<void> {
    const declared = this.declarations();
    if (declared.length === 0) return;
    if (this.kit) {
      for (const { urn, data, where: _where, ...options } of declared) {
        this.kit.declare(urn, data ?? {}, options, this.options.topic);
      }
      return;
    }
    const { pool, schedules } = this.options.outbox;
    if (!pool || !schedules) {
      throw new BabelQueueOptionsError(
        `@BabelSchedule on ${declared.map((d) => d.where).join(', ')} needs stored schedules: ` +
          'BabelQueueModule.forRoot({ outbox: { pool, schedules: true } }) (docs/scheduling.md)',
      );
    }
    const connection = await pool.connect();
    try {
      for (const { urn, data, where: _where, ...options } of declared) {
        await this.outbox.declareSchedule(connection, urn, data ?? {}, options);
      }
    } finally {
      connection.release();
    }
  }
}

/** What the testing kit stands in for stored schedules and the outbox (InMemorySchedules). */
interface KitSchedules {
  forClient(defaultTopic: string | undefined): ClientSchedules;
  outbox(options: BabelOutboxOptions): BabelOutbox;
  declare(urn: string, data: object, options: DeclaredScheduleOptions, defaultTopic: string | undefined): unknown;
}

/**
 * Everything BabelQueueModule provides, on top of the options token the builder adds. The services users reach
 * (server, publisher, Pulsar client, pool, health, redrive) are provided under the registration's tokens only:
 * the classes for the unnamed registration, tokens of its own name for a named one, so `app.get(BabelPulsarServer)`
 * never finds a named registration's server.
 */
export function babelQueueProviders(optionsToken: symbol | string, name?: string): Provider[] {
  const t = registrationTokens(name);
  return [
    { provide: BABEL_QUEUE_NAME, useValue: { name } satisfies RegistrationName },
    { provide: BABEL_QUEUE_KIT_SCHEDULES, useValue: null },
    {
      provide: BABEL_QUEUE_RESOLVED_OPTIONS,
      inject: [optionsToken],
      useFactory: (options: unknown) => resolveModuleOptions(options),
    },
    {
      provide: BABEL_QUEUE_CLIENT_HANDLE,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS],
      useFactory: ({ source, server }: ResolvedModuleOptions): ClientHandle => {
        if (source.kind === 'provided') return { client: source.client, kind: 'provided', owned: false, closed: false };
        const logger = server.logger ?? new Logger('BabelQueueModule');
        // Created on first need (listen, the first publish): a module that never connects needs neither
        // pulsar-client nor a broker, and its settings are still checked here.
        const client = new LazyPulsarClient(
          {
            serviceUrl: source.serviceUrl,
            ...(source.auth && { auth: source.auth }),
            ...(source.clientOptions && { clientOptions: source.clientOptions }),
          },
          { warn: (message) => logger.warn(message) },
        );
        return { client, kind: client.kind, owned: true, closed: false };
      },
    },
    {
      provide: t.pulsar,
      inject: [BABEL_QUEUE_CLIENT_HANDLE],
      useFactory: (handle: ClientHandle) => handle.client,
    },
    {
      provide: t.pool,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS, BABEL_QUEUE_CLIENT_HANDLE],
      useFactory: (options: ResolvedModuleOptions, handle: ClientHandle) =>
        new BabelProducerPool(handle.client, options.producerSettings),
    },
    BabelQueueHooksHost,
    {
      provide: t.server,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS, BABEL_QUEUE_CLIENT_HANDLE, t.pool, BabelQueueHooksHost],
      useFactory: (
        options: ResolvedModuleOptions,
        handle: ClientHandle,
        pool: BabelProducerPool,
        hooks: BabelQueueHooksHost,
      ) => {
        const { onError, onUnknownUrn, onRoutingMismatch, onDeadLetter } = hooks.serverHooks();
        return new BabelPulsarServer(
          { client: handle.client, topics: options.server.topics },
          {
            ...options.server,
            name,
            client: handle.client,
            producers: isProducerSource(pool) ? pool : undefined,
            onError,
            onUnknownUrn,
            onRoutingMismatch,
            onDeadLetter,
          },
        );
      },
    },
    {
      provide: t.client,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS, BABEL_QUEUE_CLIENT_HANDLE, t.pool, t.outbox, BABEL_QUEUE_KIT_SCHEDULES],
      useFactory: (
        options: ResolvedModuleOptions,
        handle: ClientHandle,
        pool: BabelProducerPool,
        outbox: BabelOutbox,
        kitSchedules: KitSchedules | null,
      ) => {
        const client = new BabelPulsarClient({
          client: handle.client,
          ...(isProducerSource(pool) && { producers: pool }),
          ...(options.topic !== undefined && { topic: options.topic }),
          ...(options.telemetry !== undefined && { telemetry: options.telemetry }),
          ...(options.publishTimeoutMs !== undefined && { publishTimeoutMs: options.publishTimeoutMs }),
          ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
          ...(options.cipher !== undefined && { cipher: options.cipher }),
        });
        const { pool: database, schedules } = options.outbox;
        // The testing kit's in-memory schedules win: a test schedules and fires with pulsar.advance(ms), no database.
        if (kitSchedules) attachClientSchedules(client, kitSchedules.forClient(options.topic));
        else if (database && schedules) attachClientSchedules(client, clientSchedulesOn(outbox, database));
        return client;
      },
    },
    {
      // brokerAtStart: 'optional' connects the publisher in the background, one log line each way.
      provide: BabelQueuePublisherStart,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS, t.client],
      useFactory: (options: ResolvedModuleOptions, publisher: BabelPulsarClient) =>
        new BabelQueuePublisherStart(
          publisher,
          { brokerAtStart: options.server.brokerAtStart ?? 'required', topic: options.topic },
          options.server.logger,
        ),
    },
    {
      provide: t.health,
      inject: [
        BABEL_QUEUE_CLIENT_HANDLE,
        t.pool,
        t.server,
        BabelQueuePublisherStart,
        t.outboxRelay,
        BabelQueueOutboxHost,
      ],
      useFactory: (
        handle: ClientHandle,
        pool: BabelProducerPool,
        server: BabelPulsarServer,
        publisherStart: BabelQueuePublisherStart,
        outboxRelay: OutboxRelay | null,
        outboxHost: BabelQueueOutboxHost,
      ) => new BabelQueueHealthIndicator(handle, pool, server, publisherStart, outboxRelay, outboxHost.dispatcher),
    },
    {
      provide: t.outbox,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS, BABEL_QUEUE_KIT_SCHEDULES],
      useFactory: (options: ResolvedModuleOptions, kit: KitSchedules | null) => {
        const outboxOptions: BabelOutboxOptions = {
          table: options.outbox.table,
          ...(options.outbox.schedules && { scheduleTable: options.outbox.schedules.table }),
          ...(options.topic !== undefined && { topic: options.topic }),
        };
        // Under the testing kit the outbox is in memory: written and scheduled messages reach the in-memory topic.
        return kit ? kit.outbox(outboxOptions) : new BabelOutbox(outboxOptions);
      },
    },
    {
      provide: t.outboxRelay,
      inject: [BABEL_QUEUE_RESOLVED_OPTIONS, t.pool, BABEL_QUEUE_KIT_SCHEDULES, BABEL_QUEUE_CLIENT_HANDLE],
      useFactory: (
        { outbox, telemetry }: ResolvedModuleOptions,
        producers: BabelProducerPool,
        kit: KitSchedules | null,
        handle: ClientHandle,
      ): OutboxRelay | null =>
        outbox.pool && outbox.relay && !kit
          ? new OutboxRelay({
              pool: outbox.pool,
              producers,
              table: outbox.table,
              ...(outbox.deduplication && { deduplication: { ...outbox.deduplication, client: handle.client } }),
              ...(telemetry !== undefined && { metrics: telemetry.metrics }),
              ...outbox.relay,
            })
          : null,
    },
    {
      provide: BabelQueueOutboxHost,
      inject: [
        BABEL_QUEUE_RESOLVED_OPTIONS,
        t.outboxRelay,
        t.outbox,
        DiscoveryService,
        MetadataScanner,
        BABEL_QUEUE_KIT_SCHEDULES,
      ],
      useFactory: (
        options: ResolvedModuleOptions,
        relay: OutboxRelay | null,
        outbox: BabelOutbox,
        discovery: DiscoveryService,
        scanner: MetadataScanner,
        kit: KitSchedules | null,
      ) =>
        new BabelQueueOutboxHost(
          options,
          relay,
          outbox,
          () => (name === undefined ? scanDeclaredSchedules(discovery, scanner) : []),
          kit,
        ),
    },
    {
      provide: BabelQueueLifecycle,
      inject: [t.server, t.client, t.pool, BABEL_QUEUE_CLIENT_HANDLE, t.outboxRelay],
      useFactory: (
        server: BabelPulsarServer,
        publisher: BabelPulsarClient,
        pool: BabelProducerPool,
        handle: ClientHandle,
        relay: OutboxRelay | null,
      ) => new BabelQueueLifecycle(server, publisher, pool, handle, relay),
    },
    {
      provide: t.redrive,
      inject: [BABEL_QUEUE_CLIENT_HANDLE],
      useFactory: (handle: ClientHandle) => new BabelQueueRedrive(handle.client),
    },
    {
      provide: BabelQueueStartupCheck,
      inject: [
        ModulesContainer,
        DiscoveryService,
        MetadataScanner,
        t.server,
        BABEL_QUEUE_NAME,
        BABEL_QUEUE_RESOLVED_OPTIONS,
      ],
      useFactory: (
        modules: ModulesContainer,
        discovery: DiscoveryService,
        scanner: MetadataScanner,
        server: BabelPulsarServer,
        registration: RegistrationName,
        options: ResolvedModuleOptions,
      ) => new BabelQueueStartupCheck(modules, discovery, scanner, server, registration, options),
    },
  ];
}

/** False for a test's stand-in of the pool (overrideProvider): the server and publisher then make their own producers. */
function isProducerSource(pool: unknown): pool is BabelProducerPool {
  return typeof (pool as Partial<BabelProducerPool> | null)?.producerFor === 'function';
}

/** The tokens of the services a registration provides. */
function registrationTokens(name: string | undefined) {
  return {
    pulsar: getPulsarClientToken(name),
    pool: getBabelProducerPoolToken(name),
    server: getBabelServerToken(name),
    client: getBabelClientToken(name),
    health: getBabelHealthIndicatorToken(name),
    redrive: getBabelRedriveToken(name),
    outbox: getBabelOutboxToken(name),
    outboxRelay: getBabelOutboxRelayToken(name),
  };
}

/** What a registration exports: the classes when unnamed, its own named tokens otherwise. */
export function babelQueueExports(name: string | undefined): InjectionToken[] {
  return Object.values(registrationTokens(name));
}
