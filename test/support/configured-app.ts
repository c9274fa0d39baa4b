// One app configured for two environments from a ConfigService only (docs/configuration.md#handler-settings-from-configuration):
// the handler's topic, subscription and attempts come from forRootAsync's factory. Played on the kit and the broker.
import 'reflect-metadata';
import { Controller, Injectable, Module } from '@nestjs/common';
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

/** The part of @nestjs/config's ConfigService the factory uses; each environment is its own values. */
@Injectable()
class ConfigService {
  constructor(private readonly values: Record<string, string>) {}
  get<T = string>(key: string): T | undefined {
    return this.values[key] as T | undefined;
  }
}

function appFor(pulsar: PulsarClientLike, environment: Record<string, string>) {
  @Module({
    providers: [{ provide: ConfigService, useValue: new ConfigService(environment) }],
    exports: [ConfigService],
  })
  class ConfigModule {}

  @Module({
    imports: [
      BabelQueueModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          client: pulsar,
          topic: config.get('HOME_TOPIC')!,
          consumer: {
            handlers: {
              'urn:cfg:env:created': {
                topic: config.get('ORDERS_TOPIC')!,
                subscription: config.get('ORDERS_SUBSCRIPTION')!,
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
