// Starts a real Nest microservice with a BabelPulsarServer for integration tests.
import 'reflect-metadata';
import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import { BabelPulsarServer, type BabelPulsarServerOptions, type SettledEvent } from '../../lib/index.js';

export interface RunningService {
  app: INestMicroservice;
  server: BabelPulsarServer;
  settled: SettledEvent[];
  close(): Promise<void>;
}

export async function startService(
  controllers: Type[],
  options: BabelPulsarServerOptions,
  providers: Type[] = [],
): Promise<RunningService> {
  @Module({ controllers, providers })
  class TestModule {}
  const server = new BabelPulsarServer({ logger: quietLogger, ...options });
  const settled: SettledEvent[] = [];
  server.on('settled', (event) => settled.push(event));
  const app = await NestFactory.createMicroservice(TestModule, { strategy: server, logger: false });
  await app.listen();
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
