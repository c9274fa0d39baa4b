import { type InjectionToken, Logger, type Provider } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { LazyPulsarClient } from '../../pulsar/lazy-client.js';
import { BabelPulsarClient } from '../client/babel-pulsar.client.js';
import { BabelPulsarServer } from '../server/babel-pulsar.server.js';
import { BabelQueueRedrive } from '../../redrive/babel-queue-redrive.js';
import { BabelQueueHealthIndicator } from './health.indicator.js';
import { resolveModuleOptions, type ResolvedModuleOptions } from './module-options.js';
import {
  BABEL_QUEUE_CLIENT_HANDLE,
  BABEL_QUEUE_KIT_SCHEDULES,
  BABEL_QUEUE_RESOLVED_OPTIONS,
  type ClientHandle,
} from './module-tokens.js';
import { BabelProducerPool } from '../client/producer-pool.js';
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
import { BabelOutbox, type BabelOutboxOptions } from '../../outbox/outbox.js';
import { OutboxRelay } from '../../outbox/relay.js';
import { attachClientSchedules } from '../client/client-schedules.js';
import { clientSchedulesOn } from './client-schedules-port.js';
import { scanDeclaredSchedules } from './declared-schedules.js';
import { BabelQueueHooksHost, BabelQueueLifecycle, BabelQueueOutboxHost, type KitSchedules } from './module-hosts.js';

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
