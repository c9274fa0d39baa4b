// One app configured for two environments from a ConfigService only (docs/configuration.md#handler-settings-from-configuration):
// @nestjs/config's ConfigModule and ConfigService; the handler's topic, subscription and attempts come from
// forRootAsync's factory. Played on the kit and the broker.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelPulsarServer,
  BabelQueueModule,
  type PulsarClientLike,
  type SettledEvent,
} from '../../lib/index.js';
import { publishTo } from './batch-scenario.js';

const handled: number[] = [];

@Controller()
class ConfiguredOrders {
  @BabelHandler('urn:cfg:env:created', { topic: 'decorated-orders', maxAttempts: 5 })
  created(@Payload() data: { n: number }) {
    handled.push(data.n);
  }
}

function appFor(pulsar: PulsarClientLike, environment: Record<string, string>) {
  @Module({
    imports: [
      BabelQueueModule.forRootAsync({
        imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => environment] })],
        inject: [ConfigService],
        useFactory: (config: ConfigService<Environment, true>) => ({
          client: pulsar,
          topic: config.get('HOME_TOPIC'),
          consumer: {
            handlers: {
              'urn:cfg:env:created': {
                topic: config.get('ORDERS_TOPIC'),
                subscription: config.get('ORDERS_SUBSCRIPTION'),
                maxAttempts: Number(config.get('ORDERS_ATTEMPTS')),
              },
            },
          },
        }),
      }),
    ],
    controllers: [ConfiguredOrders],
  })
  class AppModule {}
  return AppModule;
}

export type Environment = Record<'HOME_TOPIC' | 'ORDERS_TOPIC' | 'ORDERS_SUBSCRIPTION' | 'ORDERS_ATTEMPTS', string>;

/** Starts the app for `environment` on `client`, checks what it consumes and that a message there is handled. */
export async function expectConfiguredFor(client: PulsarClientLike, environment: Environment): Promise<void> {
  handled.splice(0);
  const app = await NestFactory.create(appFor(client, environment), { logger: false, abortOnError: false });
  const server = app.get(BabelPulsarServer);
  const settled: SettledEvent[] = [];
  server.on('settled', (event) => settled.push(event));
  app.connectMicroservice({ strategy: server });
  await app.startAllMicroservices();
  try {
    const consumed = server.describe().map(({ topic, subscription }) => `${topic} ${subscription}`);
    expect(consumed).toContain(`${environment.ORDERS_TOPIC} ${environment.ORDERS_SUBSCRIPTION}`);
    expect(consumed.some((line) => line.startsWith('decorated-orders'))).toBe(false);
    await publishTo(client, environment.ORDERS_TOPIC, [['urn:cfg:env:created', { n: 2 } as never]]);
    for (let i = 0; i < 1000 && settled.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(handled).toEqual([2]);
    expect(settled.map(({ action }) => action)).toEqual(['ack']);
  } finally {
    await app.close();
  }
}
