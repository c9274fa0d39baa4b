// README snippet: bootstrapping. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { NestFactory } from '@nestjs/core';
import type { AsyncMicroserviceOptions } from '@nestjs/microservices';
import { BabelPulsarServer } from '../../../../lib/index.js';
import { AppModule } from './app.module.js';

/** A standalone microservice. The strategy is the module's BabelPulsarServer, taken from DI. */
export async function bootstrapMicroservice() {
  const app = await NestFactory.createMicroservice<AsyncMicroserviceOptions>(AppModule, {
    inject: [BabelPulsarServer],
    useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
  });
  app.enableShutdownHooks(); // on SIGTERM: stop receiving, drain in-flight messages, then close producers and client
  await app.listen();
  return app;
}

/** HTTP and the Pulsar consumer in one process (a hybrid application). */
export async function bootstrapHybrid() {
  const app = await NestFactory.create(AppModule);
  app.connectMicroservice({ strategy: app.get(BabelPulsarServer) }, { inheritAppConfig: true });
  app.enableShutdownHooks();
  await app.startAllMicroservices();
  await app.listen(process.env.PORT ?? 3000);
  return app;
}
