import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BabelPulsarServer } from '@babelqueue/nestjs-pulsar';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';

/** A hybrid app: HTTP on PORT plus the BabelQueue microservice on the orders topic. */
async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await NestFactory.create(AppModule);
  app.connectMicroservice({ strategy: app.get(BabelPulsarServer) });
  // SIGTERM / SIGINT: stop consuming, let in-flight messages settle, then close producers and the client.
  app.enableShutdownHooks();
  await app.startAllMicroservices();
  await app.listen(config.httpPort, '127.0.0.1');
  new Logger('SampleApp').log(`listening on http://127.0.0.1:${config.httpPort}, consuming ${config.topic}`);
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
