// Starts a real Nest microservice for integration tests, built the way the README builds it:
// BabelQueueModule.forRoot() with the broker's service URL, and the module's BabelPulsarServer as the strategy.
import 'reflect-metadata';
import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import {
  BabelPulsarServer,
  BabelQueueModule,
  type BabelPulsarServerOptions,
  type BabelQueueModuleOptions,
  type SettledEvent,
} from '../../lib/index.js';
import { Test } from '@nestjs/testing';
import { InMemoryPulsar, useInMemoryPulsar } from '../../lib/testing/index.js';
import { isPlainClient, serviceUrl } from './broker.js';

export interface RunningService {
  app: INestMicroservice;
  server: BabelPulsarServer;
  settled: SettledEvent[];
  close(): Promise<void>;
}

const HOOKS = ['onError', 'onUnknownUrn', 'onRoutingMismatch', 'onDeadLetter'] as const;
/** Server options the module takes at its top level; every other one is a consumer option. */
const MODULE_LEVEL = ['logger', 'idempotency', 'telemetry', 'startupWarnings', 'brokerAtStart'] as const;

/**
 * The module options of an app with `options` (server options): a plain client of the kind under test becomes the
 * service URL (the module then makes its own client, as in every user's app); another client (a fake, one behind a
 * proxy) is handed over as the module's `client`. Undefined when only a hand-built server can take them (its
 * producers, a cipher, a retry or dead-letter producer).
 */
function moduleOptionsOf(options: BabelPulsarServerOptions): BabelQueueModuleOptions | undefined {
  const { client, name, producers, cipher, ...rest } = options as BabelPulsarServerOptions & Record<string, unknown>;
  if (name !== undefined || producers !== undefined || cipher !== undefined) return undefined;
  if (typeof rest.retry === 'object' || typeof rest.deadLetter === 'object') return undefined;
  const hooks: Record<string, unknown> = {};
  const top: Record<string, unknown> = {};
  const consumer: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    if ((HOOKS as readonly string[]).includes(key)) hooks[key] = value;
    else if ((MODULE_LEVEL as readonly string[]).includes(key)) top[key] = value;
    else consumer[key] = value;
  }
  return {
    ...(isPlainClient(client) ? { serviceUrl: serviceUrl() } : { client }),
    logger: quietLogger,
    ...top,
    consumer,
    ...(Object.keys(hooks).length > 0 && { hooks }),
  } as BabelQueueModuleOptions;
}

export async function startService(
  controllers: Type[],
  options: BabelPulsarServerOptions,
  providers: Type[] = [],
): Promise<RunningService> {
  const moduleOptions = moduleOptionsOf(options);
  let app: INestMicroservice;
  let server: BabelPulsarServer;
  const settled: SettledEvent[] = [];
  if (moduleOptions) {
    @Module({ imports: [BabelQueueModule.forRoot(moduleOptions)], controllers, providers })
    class TestModule {}
    app = await NestFactory.createMicroservice(TestModule, {
      inject: [BabelPulsarServer],
      useFactory: (strategy: BabelPulsarServer) => ({ strategy }),
      logger: false,
      // An option the module refuses rejects here, for the test to see, instead of ending the process.
      abortOnError: false,
    });
    server = app.get(BabelPulsarServer);
  } else {
    // Producers or a cipher handed to the server itself: only a hand-built server takes them.
    @Module({ controllers, providers })
    class TestModule {}
    server = new BabelPulsarServer({ logger: quietLogger, ...options });
    app = await NestFactory.createMicroservice(TestModule, { strategy: server, logger: false });
  }
  server.on('settled', (event) => settled.push(event));
  try {
    await app.listen();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  let closed = false;
  return {
    app,
    server,
    settled,
    close: async () => {
      if (closed) return;
      closed = true;
      await app.close();
    },
  };
}

export const quietLogger = { log: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/** An app module started under the testing kit (useInMemoryPulsar), as docs/testing.md shows: no broker. */
export async function startUnderKit(appModule: Type): Promise<{ pulsar: InMemoryPulsar; app: INestMicroservice }> {
  const pulsar = new InMemoryPulsar();
  const moduleRef = await useInMemoryPulsar(Test.createTestingModule({ imports: [appModule] }), pulsar).compile();
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
  await app.listen();
  return { pulsar, app };
}
