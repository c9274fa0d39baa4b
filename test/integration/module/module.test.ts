// BabelQueueModule: forRoot / forRootAsync wiring, DI hooks, dead-lettering defaults and start-up validation.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Global, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import {
  BABEL_PULSAR_CLIENT,
  BabelContext,
  BabelHandler,
  BabelProducerPool,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  BabelQueueOptionsError,
  type BabelQueueHooks,
  type BabelQueueModuleOptions,
  type BabelQueueOptionsFactory,
  type DeadLetterWrite,
  type Envelope,
} from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import {
  envelopeOf,
  expectNothing,
  isClientUnderTest,
  loadNative,
  nativeServiceUrl,
  newClient,
  quietLogger,
  rawClient,
  rawSubscribe,
  receiveOne,
  serviceUrl,
  uniqueTopic,
  waitFor,
  webUrl,
} from './support/helpers.js';
import { LazyPulsarClient } from '../../../lib/pulsar/index.js';

jest.setTimeout(60_000);

const CREATED = 'urn:babel:orders:created';
const FAILING = 'urn:babel:orders:failing';

/** What the handlers and hooks saw, shared through DI. */
@Injectable()
class Journal {
  readonly handled: Array<{ data: unknown; envelope: Envelope }> = [];
  readonly unknown: string[] = [];
  readonly deadLetters: DeadLetterWrite[] = [];
  readonly hookInstances: object[] = [];
}

@Controller()
class OrdersController {
  constructor(@Inject(Journal) private readonly journal: Journal) {}

  @BabelHandler(CREATED)
  created(@Payload() data: unknown, @Ctx() ctx: BabelContext) {
    this.journal.handled.push({ data, envelope: ctx.getEnvelope() });
  }

  @BabelHandler(FAILING)
  failing() {
    throw new Error('always fails');
  }
}

/** Hooks as a DI class: it reaches a service through its constructor. */
@Injectable()
class AuditHooks implements BabelQueueHooks {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  onUnknownUrn(envelope: Envelope) {
    this.journal.hookInstances.push(this);
    this.journal.unknown.push(envelope.job);
  }
  onDeadLetter(record: DeadLetterWrite) {
    this.journal.deadLetters.push(record);
  }
}

@Global()
@Module({ providers: [Journal], exports: [Journal] })
class JournalModule {}

/** A tiny stand-in for @nestjs/config: the same get/getOrThrow shape. */
@Injectable()
class ConfigService {
  private readonly values: Record<string, string | undefined> = {};
  set(key: string, value: string): this {
    this.values[key] = value;
    return this;
  }
  get<T = string>(key: string, fallback?: T): T | undefined {
    return (this.values[key] as T | undefined) ?? fallback;
  }
  getOrThrow<T = string>(key: string): T {
    const value = this.values[key];
    if (value === undefined) throw new Error(`config key ${key} is missing`);
    return value as T;
  }
}

function configModule(values: Record<string, string>) {
  @Module({
    providers: [
      {
        provide: ConfigService,
        useFactory: () => Object.entries(values).reduce((c, [k, v]) => c.set(k, v), new ConfigService()),
      },
    ],
    exports: [ConfigService],
  })
  class ConfigModule {}
  return ConfigModule;
}

describe('BabelQueueModule (live broker)', () => {
  const raw = rawClient();
  let app: INestMicroservice | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  afterAll(async () => {
    await raw.close();
  });

  it('forRoot: provides the client, publisher, server, pool and health indicator; a published message is consumed', async () => {
    const topic = uniqueTopic('root');
    const root = rootModule({
      imports: [JournalModule, BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, logger: quietLogger })],
      controllers: [OrdersController],
    });
    const started = await startMicroservice(root);
    app = started.app;
    expect(isClientUnderTest(app.get(BABEL_PULSAR_CLIENT))).toBe(true);
    expect(app.get(BabelPulsarServer)).toBe(started.server);
    expect(app.get(BabelProducerPool)).toBeInstanceOf(BabelProducerPool);
    const publisher = app.get(BabelPulsarClient);
    expect(publisher.topic).toBe(topic);

    const id = await publisher.publish(CREATED, { order_id: 1 }, { traceId: 'trace-root' });
    const journal = app.get(Journal);
    const [seen] = await waitFor('the handler', () => (journal.handled.length ? journal.handled : null));
    expect(seen!.data).toEqual({ order_id: 1 });
    expect(seen!.envelope).toMatchObject({ trace_id: 'trace-root', meta: { id, queue: topic, lang: 'node' } });
    await waitFor('settlement', () => started.settled.find((e) => e.action === 'ack'));
    expect(app.get(BabelQueueHealthIndicator).isHealthy()).toMatchObject({ babelqueue: { status: 'up' } });
  });

  it('forRootAsync: options from an injected config service (useFactory, imports, inject)', async () => {
    const topic = uniqueTopic('async');
    const ConfigModule = configModule({ PULSAR_URL: webUrl(), ORDERS_TOPIC: topic });
    const root = rootModule({
      imports: [
        JournalModule,
        BabelQueueModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService): BabelQueueModuleOptions => ({
            serviceUrl: config.getOrThrow('PULSAR_URL'),
            topic: config.getOrThrow('ORDERS_TOPIC'),
            consumer: { subscription: 'async-sub' },
            logger: quietLogger,
          }),
        }),
      ],
      controllers: [OrdersController],
    });
    ({ app } = await startMicroservice(root));
    await app.get(BabelPulsarClient).publish(CREATED, { via: 'async' });
    const journal = app.get(Journal);
    await waitFor('the handler', () => journal.handled.find((h) => (h.data as { via?: string }).via === 'async'));
  });

  it('forRootAsync: useClass and useExisting options factories', async () => {
    const topic = uniqueTopic('factory');
    const ConfigModule = configModule({ PULSAR_URL: webUrl(), ORDERS_TOPIC: topic });

    @Injectable()
    class BabelConfig implements BabelQueueOptionsFactory {
      constructor(@Inject(ConfigService) private readonly config: ConfigService) {}
      createBabelQueueOptions(): BabelQueueModuleOptions {
        return {
          serviceUrl: this.config.getOrThrow('PULSAR_URL'),
          topic: this.config.getOrThrow('ORDERS_TOPIC'),
          logger: quietLogger,
        };
      }
    }

    const viaClass = await Test.createTestingModule({
      imports: [BabelQueueModule.forRootAsync({ imports: [ConfigModule], useClass: BabelConfig })],
    }).compile();
    expect(viaClass.get(BabelPulsarClient).topic).toBe(topic);
    await viaClass.close();

    @Module({ imports: [ConfigModule], providers: [BabelConfig], exports: [BabelConfig] })
    class BabelConfigModule {}
    const viaExisting = await Test.createTestingModule({
      imports: [BabelQueueModule.forRootAsync({ imports: [BabelConfigModule], useExisting: BabelConfig })],
    }).compile();
    expect(viaExisting.get(BabelPulsarClient).topic).toBe(topic);
    await viaExisting.close();
  });

  it('isGlobal: a module that does not import BabelQueueModule can inject its providers', async () => {
    const topic = uniqueTopic('global');

    @Injectable()
    class Publisher {
      constructor(@Inject(BabelPulsarClient) readonly client: BabelPulsarClient) {}
    }
    @Module({ providers: [Publisher], exports: [Publisher] })
    class FeatureModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [
        BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, isGlobal: true, logger: quietLogger }),
        FeatureModule,
      ],
    }).compile();
    expect(moduleRef.get(Publisher).client).toBe(moduleRef.get(BabelPulsarClient));
    await moduleRef.close();
  });

  it('hooks as a DI class registered in the app: onUnknownUrn and onDeadLetter reach an injected service', async () => {
    const topic = uniqueTopic('hooks');
    const dlq = await rawSubscribe(raw, `${topic}.dlq`);
    const root = rootModule({
      imports: [
        JournalModule,
        BabelQueueModule.forRoot({
          serviceUrl: serviceUrl(),
          topic,
          hooks: AuditHooks,
          consumer: { maxAttempts: 1 },
          logger: quietLogger,
        }),
      ],
      controllers: [OrdersController],
      providers: [AuditHooks],
    });
    ({ app } = await startMicroservice(root));
    const journal = app.get(Journal);
    const publisher = app.get(BabelPulsarClient);
    await publisher.publish('urn:babel:nobody:listens', {});
    await waitFor('onUnknownUrn', () => journal.unknown.length > 0);
    expect(journal.unknown).toEqual(['urn:babel:nobody:listens']);
    // The instance registered in the application is the one called.
    expect(journal.hookInstances[0]).toBe(app.get(AuditHooks));

    const id = await publisher.publish(FAILING, { n: 1 });
    await waitFor('onDeadLetter', () => journal.deadLetters.length > 0);
    expect(journal.deadLetters[0]).toMatchObject({
      reason: 'failed',
      topic: `persistent://public/default/${topic}.dlq`,
    });
    // Dead-lettering is on by default in the module (docs/configuration.md): the record is on <topic>.dlq.
    const record = envelopeOf(await receiveOne(dlq));
    expect(record).toMatchObject({
      job: FAILING,
      meta: { id },
      dead_letter: { reason: 'failed', error: 'always fails' },
    });
    await dlq.close();
  });

  it('hooks as a DI class not registered anywhere: the module creates it with dependencies from global modules', async () => {
    const topic = uniqueTopic('hooks-created');
    const root = rootModule({
      imports: [
        JournalModule,
        BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, hooks: AuditHooks, logger: quietLogger }),
      ],
      controllers: [OrdersController],
    });
    ({ app } = await startMicroservice(root));
    await app.get(BabelPulsarClient).publish('urn:babel:nobody:listens', {});
    const journal = app.get(Journal);
    await waitFor('onUnknownUrn', () => journal.unknown.length > 0);
  });

  it('a hooks class whose dependencies cannot be resolved fails the start-up, saying what to do', async () => {
    @Injectable()
    class Unavailable {}
    @Injectable()
    class NeedyHooks implements BabelQueueHooks {
      constructor(@Inject(Unavailable) readonly unavailable: Unavailable) {}
      onError() {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic: uniqueTopic('needy'), hooks: NeedyHooks })],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow(
      /could not create the hooks class NeedyHooks: register it as a provider/,
    );
    await moduleRef.close().catch(() => undefined); // Nest 12 re-raises the failed initialisation here
  });

  it('hooks as a plain object keep their `this`', async () => {
    const topic = uniqueTopic('hooks-object');
    const seen: string[] = [];
    const hooks = {
      prefix: 'unknown:',
      onUnknownUrn(this: { prefix: string }, envelope: Envelope) {
        seen.push(`${this.prefix}${envelope.job}`);
      },
    };
    const root = rootModule({
      imports: [BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, hooks, logger: quietLogger })],
    });
    ({ app } = await startMicroservice(root));
    await app.get(BabelPulsarClient).publish('urn:babel:x', {});
    await waitFor('onUnknownUrn', () => seen.length > 0);
    expect(seen).toEqual(['unknown:urn:babel:x']);
  });

  it('deadLetter: false turns dead-lettering off: an exhausted message is acknowledged and dropped', async () => {
    const topic = uniqueTopic('nodlq');
    const dlq = await rawSubscribe(raw, `${topic}.dlq`);
    const root = rootModule({
      imports: [
        JournalModule,
        BabelQueueModule.forRoot({
          serviceUrl: serviceUrl(),
          topic,
          consumer: { maxAttempts: 1, deadLetter: false },
          logger: quietLogger,
        }),
      ],
      controllers: [OrdersController],
    });
    const started = await startMicroservice(root);
    app = started.app;
    await app.get(BabelPulsarClient).publish(FAILING, {});
    const event = await waitFor('settlement', () => started.settled.find((e) => e.urn === FAILING));
    expect(event.action).toBe('drop');
    await expectNothing(dlq, 1000);
    await dlq.close();
  });

  it('a testing module can run the microservice with moduleRef.createNestMicroservice({ strategy })', async () => {
    const topic = uniqueTopic('testing');
    const moduleRef = await Test.createTestingModule({
      imports: [JournalModule, BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, logger: quietLogger })],
      controllers: [OrdersController],
    }).compile();
    app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
    await app.listen();
    await moduleRef.get(BabelPulsarClient).publish(CREATED, { via: 'testing' });
    const journal = moduleRef.get(Journal);
    await waitFor('the handler', () => journal.handled.find((h) => (h.data as { via?: string }).via === 'testing'));
  });

  it('validates options at start-up with errors naming the option (forRoot and forRootAsync)', async () => {
    await expect(
      Test.createTestingModule({
        imports: [BabelQueueModule.forRoot({ serviceUrl: 'amqp://localhost', topic: 'orders' })],
      }).compile(),
    ).rejects.toThrow(
      /Invalid BabelQueueModule options: options\.serviceUrl "amqp:\/\/localhost" has an unsupported scheme/,
    );
    await expect(
      Test.createTestingModule({
        imports: [
          BabelQueueModule.forRootAsync({
            useFactory: () => ({ serviceUrl: serviceUrl(), topic: 'orders', consumer: { maxAttempts: 0 } }),
          }),
        ],
      }).compile(),
    ).rejects.toBeInstanceOf(BabelQueueOptionsError);
  });

  it('a pulsar:// serviceUrl gives the native pulsar-client Client (created on first need)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [BabelQueueModule.forRoot({ serviceUrl: nativeServiceUrl(), topic: 'orders', logger: quietLogger })],
    }).compile();
    const lazy = moduleRef.get<LazyPulsarClient>(BABEL_PULSAR_CLIENT);
    expect(lazy).toBeInstanceOf(LazyPulsarClient);
    expect(lazy.current).toBeUndefined();
    expect(await lazy.open()).toBeInstanceOf(loadNative().Client);
    expect(lazy.current).toBeInstanceOf(loadNative().Client);
    await moduleRef.close();
  });

  it('a ready client given in the options is used and never closed by the module', async () => {
    const topic = uniqueTopic('own-client');
    const client = newClient();
    const moduleRef = await Test.createTestingModule({
      imports: [BabelQueueModule.forRoot({ client, topic, logger: quietLogger })],
    }).compile();
    expect(moduleRef.get(BABEL_PULSAR_CLIENT)).toBe(client);
    await moduleRef.get(BabelPulsarClient).publish(CREATED, {});
    await moduleRef.close();
    // Still usable after the module shut down.
    const producer = await client.createProducer({ topic });
    await producer.close();
    await client.close();
  });
});
