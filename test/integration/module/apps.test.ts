// Hybrid (HTTP + microservice) and standalone applications built on BabelQueueModule: start, consume, shut down
// cleanly with nothing lost, and the shutdown order (server drained before the producers and client close).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  type INestApplication,
  type INestMicroservice,
} from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BABEL_PULSAR_CLIENT,
  BabelContext,
  BabelHandler,
  BabelProducerPool,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { rootModule, startHybrid, startMicroservice } from './support/apps.js';
import {
  envelopeOf,
  quietLogger,
  rawClient,
  rawSubscribe,
  receiveOne,
  serviceUrl,
  sleep,
  uniqueTopic,
  waitFor,
} from './support/helpers.js';

jest.setTimeout(90_000);

const TICK = 'urn:babel:apps:tick';
const SLOW_FAIL = 'urn:babel:apps:slow-fail';

@Injectable()
class Seen {
  readonly ids: string[] = [];
  slowFailStarted = 0;
}

@Controller()
class Worker {
  constructor(@Inject(Seen) private readonly seen: Seen) {}

  @BabelHandler(TICK)
  async tick(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
    await sleep(150);
    this.seen.ids.push(ctx.getEnvelope().meta.id);
  }

  @BabelHandler(SLOW_FAIL)
  async slowFail() {
    this.seen.slowFailStarted++;
    await sleep(1000);
    throw new Error('failed after a while');
  }
}

@Controller('status')
class StatusController {
  constructor(@Inject(BabelQueueHealthIndicator) private readonly health: BabelQueueHealthIndicator) {}

  @Get()
  status() {
    return this.health.isHealthy();
  }
}

function appModule(topic: string, seen: Seen) {
  @Module({ providers: [{ provide: Seen, useValue: seen }], exports: [Seen] })
  class SeenModule {}
  return rootModule({
    imports: [
      SeenModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { concurrency: 1, maxAttempts: 3 },
        logger: quietLogger,
      }),
    ],
    controllers: [Worker, StatusController],
  });
}

/** Records the order of the shutdown steps that matter. */
function recordShutdown(app: INestApplication | INestMicroservice, server: BabelPulsarServer): string[] {
  const order: string[] = [];
  const serverClose = server.close.bind(server);
  server.close = async () => {
    order.push('server.close:start');
    await serverClose();
    order.push('server.close:end');
  };
  server.on('settled', (event) =>
    order.push(`settled:${event.action}${event.written === false ? ':NOT-WRITTEN' : ''}`),
  );
  const pool = app.get(BabelProducerPool);
  const poolClose = pool.close.bind(pool);
  pool.close = () => {
    order.push('pool.close');
    return poolClose();
  };
  const client = app.get<PulsarClientLike>(BABEL_PULSAR_CLIENT);
  const clientClose = client.close.bind(client);
  client.close = () => {
    order.push('client.close');
    return clientClose();
  };
  return order;
}

describe('applications on BabelQueueModule (live broker)', () => {
  const raw = rawClient();

  afterAll(async () => {
    await raw.close();
  });

  it('a hybrid app and then a standalone microservice consume every message; shutdown loses nothing', async () => {
    const topic = uniqueTopic('handover');
    const seen = new Seen();
    const hybrid = await startHybrid(appModule(topic, seen));
    // HTTP works alongside the microservice.
    const status = (await (await fetch(`${hybrid.url}/status`)).json()) as { babelqueue: { status: string } };
    expect(status.babelqueue.status).toBe('up');

    const publisher = hybrid.app.get(BabelPulsarClient);
    const published = await Promise.all(Array.from({ length: 12 }, (_, n) => publisher.publish(TICK, { n })));
    await waitFor('a few handled', () => seen.ids.length >= 3);
    await hybrid.app.close(); // mid-stream: the in-flight message settles, the rest stay on the subscription
    const handledByHybrid = seen.ids.length;
    expect(handledByHybrid).toBeLessThan(published.length);

    const standalone = await startMicroservice(appModule(topic, seen));
    await waitFor('every message handled', () => new Set(seen.ids).size === published.length, 30_000);
    await standalone.app.close();
    expect(new Set(seen.ids)).toEqual(new Set(published));
  });

  it.each(['hybrid', 'standalone', 'standalone, signal path'] as const)(
    '%s: the server drains before the producer pool and the client close (a retry written during drain)',
    async (kind) => {
      const topic = uniqueTopic('order');
      const observer = await rawSubscribe(raw, topic);
      const seen = new Seen();
      const started =
        kind === 'hybrid' ? await startHybrid(appModule(topic, seen)) : await startMicroservice(appModule(topic, seen));
      const order = recordShutdown(started.app, started.server);

      const id = await started.app.get(BabelPulsarClient).publish(SLOW_FAIL, {});
      await waitFor('the handler to start', () => seen.slowFailStarted > 0);
      if (kind === 'standalone, signal path') {
        // What enableShutdownHooks() runs on SIGTERM (Nest 12), minus re-raising the signal at the end.
        await (started.app as unknown as { shutdown(signal: string): Promise<void> }).shutdown('SIGTERM');
      } else {
        await started.app.close();
      }

      expect(order).toEqual([
        'server.close:start', // Nest closes the strategy (standalone: first thing; hybrid: in dispose())
        'settled:retry', // the in-flight handler failed during the drain and its retry copy was written
        'server.close:end',
        'server.close:start', // the module's onApplicationShutdown waits for the server again (a no-op now)
        'server.close:end',
        'pool.close', // only then the retry / dead-letter producers
        'client.close', // and last the client the module created
      ]);
      // The retry copy the drained handler produced really reached the topic.
      const original = await receiveOne(observer);
      const retry = await receiveOne(observer);
      expect(envelopeOf(original).meta.id).toBe(id);
      expect(envelopeOf(retry)).toMatchObject({ meta: { id }, attempts: 1 });
      expect(retry.getProperties()['bq-attempts']).toBe('1');
      await observer.close();
    },
  );
});
