// The app as users build it (the README's way: BabelQueueModule.forRoot({ serviceUrl }), the module's server as the
// strategy), with many subscriptions, on the client under test. Before the module passed the native intake on, each
// native subscription waited in receive(500) on one of libuv's four pool threads: with 8 of them the app handled about
// 4 messages a second and every file read in the process waited up to 2 s. (The addon's receive() cannot be spied on:
// its prototype's methods are read-only; test/unit/pulsar/library-client.test.ts checks the calls on a stand-in.)
import { jest } from '@jest/globals';
import { Controller, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { BabelHandler, BabelPulsarClient, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import { serviceUrl, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger } from '../../support/nest-app.js';

jest.setTimeout(120_000);

/** A controller with one handler per topic: `urn:babel:user-path:<i>` on topics[i]. */
function handlersOn(topics: string[], handled: number[]): Type {
  class Handlers {}
  const prototype = Handlers.prototype as unknown as Record<string, (data: { n: number }) => void>;
  topics.forEach((topic, i) => {
    const name = `handle${i}`;
    prototype[name] = (data) => {
      handled.push(data.n);
    };
    BabelHandler(`urn:babel:user-path:${i}`, { topic })(
      Handlers.prototype,
      name,
      Object.getOwnPropertyDescriptor(Handlers.prototype, name)!,
    );
  });
  Controller()(Handlers);
  return Handlers;
}

async function startApp(
  subscriptions: number,
  handled: number[],
): Promise<{ app: INestMicroservice; topics: string[] }> {
  const topics = Array.from({ length: subscriptions }, (_, i) => uniqueTopic(`user-path-${i}`));
  @Module({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic: topics[0]!,
        consumer: { subscription: 'user-path', concurrency: 8 },
        logger: quietLogger,
      }),
    ],
    controllers: [handlersOn(topics, handled)],
  })
  class AppModule {}
  const app = await NestFactory.createMicroservice(AppModule, {
    inject: [BabelPulsarServer],
    useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
    logger: false,
    abortOnError: false,
  });
  await app.listen();
  return { app, topics };
}

describe('an app built from a service URL, with many subscriptions', () => {
  it('keeps up with live traffic on 8 subscriptions', async () => {
    const handled: number[] = [];
    const { app } = await startApp(8, handled);
    try {
      const client = app.get(BabelPulsarClient);
      for (let n = 0; n < 60; n++) await client.publish('urn:babel:user-path:0', { n });
      // Handled as it comes (within milliseconds); the old pull loop took 20 to 30 s for the rest.
      await waitFor('every message handled', () => handled.length === 60, 10_000);
      expect([...handled].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, n) => n));
    } finally {
      await app.close();
    }
  });

  it("leaves libuv's thread pool free while idle on 32 subscriptions: small file reads stay fast", async () => {
    const { app } = await startApp(32, []);
    try {
      const took: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        await fs.promises.readFile(new URL(import.meta.url));
        took.push(performance.now() - started);
      }
      took.sort((a, b) => a - b);
      console.log(`[user path] idle app, 32 subscriptions: readFile p50 ${took[10]!.toFixed(2)} ms`);
      // About 0.3 ms here; with the pool held by receives it was 2,000 ms at 8 subscriptions.
      expect(took[10]).toBeLessThan(100);
    } finally {
      await app.close();
    }
  });
});
