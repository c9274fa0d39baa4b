// The services a registration runs beside its server: hooks resolved through DI, the shutdown order, the outbox.
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { BabelQueueHooks } from '../../consumer/index.js';
import { BabelQueueError } from '../../envelope/index.js';
import { BabelPulsarClient } from '../client/babel-pulsar.client.js';
import { BabelPulsarServer } from '../server/babel-pulsar.server.js';
import { HOOK_NAMES, type HookName } from './hooks-option.js';
import type { ResolvedModuleOptions } from './module-options.js';
import { BABEL_QUEUE_CLIENT_HANDLE, BABEL_QUEUE_RESOLVED_OPTIONS, type ClientHandle } from './module-tokens.js';
import { BabelProducerPool } from '../client/producer-pool.js';
import type { BabelPulsarServerOptions } from '../server/server-options.js';
import { closeIfClosable } from './stubbed-provider.js';
import { BabelOutbox, type BabelOutboxOptions } from '../../outbox/outbox.js';
import { OutboxRelay } from '../../outbox/relay.js';
import { outboxMigrationSql } from '../../outbox/table.js';
import { ScheduleDispatcher } from '../../outbox/schedule-dispatcher.js';
import { scheduleMigrationSql } from '../../outbox/schedule-table.js';
import type { DeclaredSchedule } from './declared-schedules.js';
import type { ClientSchedules } from '../client/client-schedules.js';
import type { DeclaredScheduleOptions } from '../../schedule/index.js';
import { BabelQueueOptionsError } from './options-error.js';
import { errorText } from '../../envelope/error-text.js';

/** What the testing kit stands in for stored schedules and the outbox (InMemorySchedules). */
export interface KitSchedules {
  forClient(defaultTopic: string | undefined): ClientSchedules;
  outbox(options: BabelOutboxOptions): BabelOutbox;
  declare(urn: string, data: object, options: DeclaredScheduleOptions, defaultTopic: string | undefined): unknown;
}

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
