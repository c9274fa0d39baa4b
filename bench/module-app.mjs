// The app as users build it, for the benches: BabelQueueModule.forRoot() from a service URL (or, to show there is no
// gap, handed a raw client), with the module's BabelPulsarServer as the strategy (the README's bootstrap).
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const quiet = { log() {}, warn() {}, error() {}, debug() {} };

/**
 * Starts a module-built microservice. `connection` is `{ serviceUrl }` or `{ client }`; `consumer` the module's
 * consumer options; `controllers` the app's controllers; `more` other module options (an inbox, an outbox). `lib` is
 * the library's entry (this build by default).
 * Resolves to { app, client: the module's BabelPulsarClient, server, close() }.
 */
export async function startModuleApp({
  lib,
  connection,
  topic,
  consumer = {},
  controllers,
  providers = [],
  more = {},
}) {
  class BenchAppModule {}
  Module({
    imports: [
      lib.BabelQueueModule.forRoot({ ...connection, topic, consumer, ...more, logger: quiet, startupWarnings: false }),
    ],
    controllers,
    providers,
  })(BenchAppModule);
  const app = await NestFactory.createMicroservice(BenchAppModule, {
    inject: [lib.BabelPulsarServer],
    useFactory: (server) => ({ strategy: server }),
    logger: false,
  });
  await app.listen();
  return {
    app,
    client: app.get(lib.BabelPulsarClient),
    server: app.get(lib.BabelPulsarServer),
    close: () => app.close(),
  };
}
