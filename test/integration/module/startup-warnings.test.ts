// Start-up warnings for wiring that would otherwise fail in silence (README "Warnings at start-up"), each logged
// once, through real applications on the broker; and the onModuleInit publish that a new subscription at
// `Latest` would miss, handled with `subscriptionInitialPosition: 'Earliest'`.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import {
  Controller,
  Inject,
  Injectable,
  Module,
  type INestApplication,
  type LoggerService,
  type OnModuleInit,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueModule,
  type BabelQueueModuleRootOptions,
} from '../../../lib/index.js';
import { serviceUrl, sleep, uniqueTopic, waitFor } from './support/helpers.js';

jest.setTimeout(60_000);

const URN = 'urn:babel:warnings:ping';

class CapturingLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  debug(): void {}
  verbose(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
  matching(pattern: RegExp): string[] {
    return this.warnings.filter((line) => pattern.test(line));
  }
}

const running: INestApplication[] = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((app) => app.close()));
});

const options = (topic: string, extra: Partial<BabelQueueModuleRootOptions> = {}): BabelQueueModuleRootOptions => ({
  serviceUrl: serviceUrl(),
  topic,
  startupWarnings: { serverNotStartedAfterMs: 300 },
  ...extra,
});

async function create(
  root: new () => unknown,
  connect: boolean,
): Promise<{ app: INestApplication; logger: CapturingLogger }> {
  const logger = new CapturingLogger();
  const app = await NestFactory.create(root, { logger, abortOnError: false });
  running.push(app);
  if (connect) {
    app.connectMicroservice({ strategy: app.get(BabelPulsarServer) }, { inheritAppConfig: true });
    await app.startAllMicroservices();
  }
  await app.init();
  return { app, logger };
}

@Controller()
class Pings {
  readonly seen: unknown[] = [];

  @BabelHandler(URN)
  ping(@Payload() data: unknown) {
    this.seen.push(data);
  }
}

describe('start-up warnings', () => {
  it('warns once about a @BabelHandler on a provider, even with two registrations', async () => {
    @Injectable()
    class ProviderWithHandler {
      @BabelHandler('urn:babel:warnings:lost')
      lost() {}
    }

    @Module({
      imports: [
        BabelQueueModule.forRoot(options(uniqueTopic('provider'))),
        BabelQueueModule.forRoot({ ...options(uniqueTopic('provider-b')), name: 'b' }),
      ],
      controllers: [Pings],
      providers: [ProviderWithHandler],
    })
    class Root {}

    const { logger } = await create(Root, true);
    const lines = logger.matching(/ProviderWithHandler\.lost/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/provider, not a controller.*unknown_urn.*controllers/);
  });

  it('warns once per pattern about @EventPattern and @MessagePattern bound to the Babel server', async () => {
    @Controller()
    class Legacy {
      @EventPattern('urn:babel:warnings:event')
      event(@Payload() _data: unknown) {}

      @MessagePattern('urn:babel:warnings:message')
      message(@Payload() _data: unknown) {
        return 'a reply to send()';
      }
    }

    @Module({ imports: [BabelQueueModule.forRoot(options(uniqueTopic('patterns')))], controllers: [Legacy] })
    class Root {}

    const { logger } = await create(Root, true);
    const event = logger.matching(/@EventPattern\('urn:babel:warnings:event'\)/);
    const message = logger.matching(/@MessagePattern\('urn:babel:warnings:message'\)/);
    expect(event).toHaveLength(1);
    expect(event[0]).toMatch(/use @BabelHandler\('urn:babel:warnings:event'\)/);
    expect(message).toHaveLength(1);
    // Its return value answers send() as a @BabelHandler's does (docs/request-response.md): only the cause is lost.
    expect(message[0]).toMatch(/without their cause/);
    expect(message[0]).not.toMatch(/return value/);
  });

  it('warns once about a second forRoot without a name', async () => {
    @Module({
      imports: [
        BabelQueueModule.forRoot(options(uniqueTopic('first'))),
        BabelQueueModule.forRoot(options(uniqueTopic('second'))),
      ],
      controllers: [Pings],
    })
    class Root {}

    const { logger } = await create(Root, true);
    const lines = logger.matching(/registered 2 times without a name/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/forRoot\(\{ name: 'billing'/);
  });

  it('warns once about handlers bound to a connection name nobody registered', async () => {
    @Controller()
    class Orphan {
      @BabelHandler('urn:babel:warnings:orphan', { connection: 'payments' })
      orphan() {}
    }

    @Module({ imports: [BabelQueueModule.forRoot(options(uniqueTopic('orphan')))], controllers: [Orphan] })
    class Root {}

    const { logger } = await create(Root, true);
    const lines = logger.matching(/connection 'payments'/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Orphan\.orphan is bound to connection 'payments'.*registered: unnamed/);
  });

  it('warns once when a server with handlers was never started, and not when it was', async () => {
    @Module({ imports: [BabelQueueModule.forRoot(options(uniqueTopic('never')))], controllers: [Pings] })
    class NeverStarted {}

    const idle = await create(NeverStarted, false);
    await waitFor('the not-started warning', () => idle.logger.matching(/was not started/).length > 0);
    await sleep(600);
    const lines = idle.logger.matching(/was not started/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Pings\.ping.*app\.connectMicroservice\(\{ strategy: app\.get\(BabelPulsarServer\) \}\)/);

    @Module({ imports: [BabelQueueModule.forRoot(options(uniqueTopic('started')))], controllers: [Pings] })
    class Started {}

    const started = await create(Started, true);
    await sleep(800);
    expect(started.logger.matching(/was not started/)).toEqual([]);
  });

  it("does not report the module's server when the app consumes through a server of its own", async () => {
    const topic = uniqueTopic('own-server');
    @Module({ imports: [BabelQueueModule.forRoot(options(topic))], controllers: [Pings] })
    class Root {}

    const { app, logger } = await create(Root, false);
    const own = new BabelPulsarServer({ client: app.get(BabelPulsarClient).unwrap(), topics: topic });
    app.connectMicroservice({ strategy: own });
    await app.startAllMicroservices();
    await sleep(800);
    expect(logger.matching(/was not started/)).toEqual([]);
  });

  it('logs none of these with startupWarnings: false', async () => {
    @Injectable()
    class ProviderWithHandler {
      @BabelHandler('urn:babel:warnings:quiet')
      quiet() {}
    }

    @Module({
      imports: [
        BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic: uniqueTopic('quiet'), startupWarnings: false }),
      ],
      controllers: [Pings],
      providers: [ProviderWithHandler],
    })
    class Root {}

    const { logger } = await create(Root, false);
    await sleep(5600);
    expect(logger.warnings).toEqual([]);
  });
});

describe('publishing in onModuleInit', () => {
  it("is handled by a new subscription that starts at 'Earliest' (at 'Latest' it would be missed)", async () => {
    const topic = uniqueTopic('init');

    @Injectable()
    class Greeter implements OnModuleInit {
      constructor(@Inject(BabelPulsarClient) private readonly babel: BabelPulsarClient) {}

      // Runs before startAllMicroservices subscribes: the message is on the topic before the subscription exists.
      async onModuleInit() {
        await this.babel.publish(URN, { hello: 'from onModuleInit' });
      }
    }

    @Module({
      imports: [BabelQueueModule.forRoot(options(topic, { consumer: { subscriptionInitialPosition: 'Earliest' } }))],
      controllers: [Pings],
      providers: [Greeter],
    })
    class Root {}

    const { app } = await create(Root, true);
    const pings = app.get(Pings);
    await waitFor('the onModuleInit message', () => pings.seen.length === 1);
    expect(pings.seen).toEqual([{ hello: 'from onModuleInit' }]);
  });
});
