// Topology through the real broker: @BabelHandler(urn, { topic, subscription }) gives an app several topics and
// subscriptions (each subscribed once, routing within it), and named registrations (forRoot({ name }),
// @InjectBabelClient(name), @BabelHandler(urn, { connection })) run side by side in one app.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueModule,
  getBabelServerToken,
  InjectBabelClient,
  type SettledEvent,
} from '../../../lib/index.js';
import {
  envelopeOf,
  rawClient,
  rawSubscribe,
  receiveOne,
  serviceUrl,
  uniqueTopic,
  waitFor,
} from './support/helpers.js';

jest.setTimeout(90_000);

const CREATED = 'urn:babel:topology:created';
const PAID = 'urn:babel:topology:paid';

interface Call {
  handler: string;
  topic: string;
  urn: string;
}

@Injectable()
class Calls {
  readonly list: Call[] = [];
  record(handler: string, ctx: BabelContext): void {
    this.list.push({ handler, topic: ctx.getTopic(), urn: ctx.getUrn() });
  }
}

/** Keeps what Nest logs, so the tests can read the warnings. */
class CapturingLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  debug(): void {}
  verbose(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

const running: INestApplication[] = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((app) => app.close()));
});

async function start(
  root: new () => unknown,
  servers: BabelPulsarServer[] | ((app: INestApplication) => BabelPulsarServer[]),
  logger: LoggerService | false = false,
): Promise<{ app: INestApplication; settled: SettledEvent[] }> {
  const app = await NestFactory.create(root, { logger, abortOnError: false });
  running.push(app);
  const settled: SettledEvent[] = [];
  for (const server of typeof servers === 'function' ? servers(app) : servers) {
    server.on('settled', (event) => settled.push(event));
    app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
  }
  await app.startAllMicroservices();
  await app.init();
  return { app, settled };
}

describe('@BabelHandler(urn, { topic, subscription })', () => {
  it('subscribes each topic and subscription once and routes within it; a URN is not run from another topic', async () => {
    const home = uniqueTopic('home');
    const orders = uniqueTopic('orders');
    const payments = uniqueTopic('payments');

    @Controller()
    class Handlers {
      constructor(@Inject(Calls) private readonly calls: Calls) {}

      @BabelHandler(CREATED, { topic: orders, subscription: 'orders-svc' })
      created(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('created', ctx);
      }

      @BabelHandler(PAID, { topic: payments, subscription: 'payments-svc' })
      paid(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('paid', ctx);
      }
    }

    @Module({
      imports: [BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic: home })],
      controllers: [Handlers],
      providers: [Calls],
    })
    class Root {}

    const observer = rawClient();
    try {
      const ordersDlq = await rawSubscribe(observer, `${orders}.dlq`);
      const { app, settled } = await start(Root, (a) => [a.get(BabelPulsarServer)]);
      const server = app.get(BabelPulsarServer);
      // The module's own topic has no handler once every handler chose its topic: it is not subscribed.
      expect(
        server
          .describe()
          .map(({ topic, subscription }) => `${topic}|${subscription}`)
          .sort(),
      ).toEqual([`${orders}|orders-svc`, `${payments}|payments-svc`].sort());

      const publisher = app.get(BabelPulsarClient);
      await publisher.publish(CREATED, { n: 1 }, { topic: orders });
      await publisher.publish(PAID, { n: 2 }, { topic: payments });
      // PAID has a handler, but not on this topic: it is unknown here and dead-lettered, never run.
      const stray = await publisher.publish(PAID, { n: 3 }, { topic: orders });
      const calls = app.get(Calls);
      await waitFor('both handled', () => calls.list.length >= 2);
      const record = envelopeOf(await receiveOne(ordersDlq));
      expect(record.meta.id).toBe(stray);
      expect(record.dead_letter?.reason).toBe('unknown_urn');
      expect(calls.list).toEqual(
        expect.arrayContaining([
          { handler: 'created', topic: orders, urn: CREATED },
          { handler: 'paid', topic: payments, urn: PAID },
        ]),
      );
      expect(calls.list).toHaveLength(2);
      await waitFor('three settled', () => settled.length >= 3);
      expect(settled.filter((event) => event.action === 'dead-letter')).toHaveLength(1);
    } finally {
      await observer.close();
    }
  });

  it('fans one topic out to two subscriptions: each runs its own handlers and skips what only the other handles', async () => {
    const orders = uniqueTopic('fanout');

    @Controller()
    class Billing {
      constructor(@Inject(Calls) private readonly calls: Calls) {}

      @BabelHandler(CREATED, { subscription: 'billing' })
      created(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('billing.created', ctx);
      }

      @BabelHandler(PAID, { subscription: 'billing' })
      paid(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('billing.paid', ctx);
      }
    }

    @Controller()
    class Audit {
      constructor(@Inject(Calls) private readonly calls: Calls) {}

      @BabelHandler(CREATED, { subscription: 'audit' })
      created(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('audit.created', ctx);
      }
    }

    @Module({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl: serviceUrl(),
          topic: orders,
          consumer: { subscriptionInitialPosition: 'Earliest' },
        }),
      ],
      controllers: [Billing, Audit],
      providers: [Calls],
    })
    class Root {}

    const observer = rawClient();
    try {
      const dlq = await rawSubscribe(observer, `${orders}.dlq`);
      const { app, settled } = await start(Root, (a) => [a.get(BabelPulsarServer)]);
      expect(
        app
          .get(BabelPulsarServer)
          .describe()
          .map(({ subscription }) => subscription)
          .sort(),
      ).toEqual(['audit', 'billing']);
      const publisher = app.get(BabelPulsarClient);
      await publisher.publish(CREATED, { n: 1 });
      await publisher.publish(PAID, { n: 2 });
      const calls = app.get(Calls);
      // created: both subscriptions; paid: billing runs it, audit acknowledges it without running anything.
      await waitFor('four settlements', () => settled.length >= 4);
      expect(calls.list.map((call) => call.handler).sort()).toEqual([
        'audit.created',
        'billing.created',
        'billing.paid',
      ]);
      expect(settled.every((event) => event.action === 'ack')).toBe(true);
      await expect(dlq.receive(1500)).rejects.toThrow();
    } finally {
      await observer.close();
    }
  });
});

describe('named registrations', () => {
  it('runs two registrations side by side: each client publishes to its topic, each server runs its own handlers', async () => {
    const us = uniqueTopic('us');
    const eu = uniqueTopic('eu');

    @Injectable()
    class Publishers {
      constructor(
        @Inject(BabelPulsarClient) readonly main: BabelPulsarClient,
        @InjectBabelClient('eu') readonly eu: BabelPulsarClient,
      ) {}
    }

    @Controller()
    class Handlers {
      constructor(@Inject(Calls) private readonly calls: Calls) {}

      @BabelHandler(CREATED)
      usCreated(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('us', ctx);
      }

      @BabelHandler(CREATED, { connection: 'eu' })
      euCreated(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
        this.calls.record('eu', ctx);
      }
    }

    @Module({
      imports: [
        BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic: us }),
        BabelQueueModule.forRootAsync({ name: 'eu', useFactory: () => ({ serviceUrl: serviceUrl(), topic: eu }) }),
      ],
      controllers: [Handlers],
      providers: [Calls, Publishers],
    })
    class Root {}

    const logger = new CapturingLogger();
    const { app } = await start(
      Root,
      (a) => [a.get(BabelPulsarServer), a.get<string, BabelPulsarServer>(getBabelServerToken('eu') as string)],
      logger,
    );
    const main = app.get(BabelPulsarServer);
    const euServer = app.get<string, BabelPulsarServer>(getBabelServerToken('eu') as string);
    expect(euServer).not.toBe(main);
    expect(euServer.connectionName).toBe('eu');
    expect(main.describe().map(({ topic }) => topic)).toEqual([us]);
    expect(euServer.describe().map(({ topic }) => topic)).toEqual([eu]);

    const publishers = app.get(Publishers);
    expect(publishers.eu).not.toBe(publishers.main);
    await publishers.main.publish(CREATED, { n: 1 });
    await publishers.eu.publish(CREATED, { n: 2 });
    const calls = app.get(Calls);
    await waitFor('both handled', () => calls.list.length >= 2);
    expect(calls.list.sort((a, b) => a.handler.localeCompare(b.handler))).toEqual([
      { handler: 'eu', topic: eu, urn: CREATED },
      { handler: 'us', topic: us, urn: CREATED },
    ]);
    // A named registration next to an unnamed one is the intended set-up: no wiring warning.
    expect(logger.warnings.filter((line) => /registered \d+ times without a name/.test(line))).toEqual([]);
  });

  it('refuses a blank registration name', () => {
    expect(() => BabelQueueModule.forRoot({ name: ' ', serviceUrl: serviceUrl(), topic: 'x' })).toThrow(
      /name must be a non-blank string/,
    );
  });
});
