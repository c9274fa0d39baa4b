// Builds and starts Nest applications around BabelQueueModule for the integration tests.
import 'reflect-metadata';
import type { DynamicModule, INestApplication, INestMicroservice, Type } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AsyncMicroserviceOptions } from '@nestjs/microservices';
import { BabelPulsarServer, type SettledEvent } from '../../../../lib/index.js';

export interface AppParts {
  imports: Array<DynamicModule | Type>;
  controllers?: Type[];
  providers?: Type[];
}

export function rootModule({ imports, controllers = [], providers = [] }: AppParts): Type {
  @Module({ imports, controllers, providers })
  class RootModule {}
  return RootModule;
}

/** A standalone microservice whose strategy is the module's BabelPulsarServer (resolved from DI). */
export async function startMicroservice(
  root: Type,
): Promise<{ app: INestMicroservice; server: BabelPulsarServer; settled: SettledEvent[] }> {
  const app = await NestFactory.createMicroservice<AsyncMicroserviceOptions>(root, {
    inject: [BabelPulsarServer],
    useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
    logger: false,
    abortOnError: false,
  });
  const server = app.get(BabelPulsarServer);
  const settled: SettledEvent[] = [];
  server.on('settled', (event) => settled.push(event));
  await app.listen();
  return { app, server, settled };
}

/** A hybrid application: HTTP (express, on a free port) plus the module's BabelPulsarServer. */
export async function startHybrid(
  root: Type,
): Promise<{ app: INestApplication; server: BabelPulsarServer; settled: SettledEvent[]; url: string }> {
  const app = await NestFactory.create(root, { logger: false, abortOnError: false });
  const server = app.get(BabelPulsarServer);
  const settled: SettledEvent[] = [];
  server.on('settled', (event) => settled.push(event));
  app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  return { app, server, settled, url: await app.getUrl() };
}
