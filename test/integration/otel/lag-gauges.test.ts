// The lag gauges on the broker with the client under test, in a module-built app: they equal the admin API's own
// figures within an interval, rise with a backlog and fall as it drains (docs/operations.md#lag-gauges).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { createPartitionedTopic, deletePartitionedTopic } from '../../../scripts/lib/scale-run.mjs';
import { rootModule, startMicroservice } from '../module/support/apps.js';
import {
  quietLogger,
  rawClient,
  rawSubscribe,
  serviceUrl,
  uniqueTopic,
  waitFor,
  webUrl,
} from '../module/support/helpers.js';

jest.setTimeout(120_000);

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
beforeAll(() => metrics.setGlobalMeterProvider(meterProvider));
afterAll(async () => {
  metrics.disable();
  await meterProvider.shutdown();
});

const WORK = 'urn:babel:lag:work';
const BROKEN = 'urn:babel:lag:broken';
let gate: Promise<void> = Promise.resolve();

@Controller()
class Worker {
  @BabelHandler(WORK)
  async work() {
    await gate;
  }

  @BabelHandler(BROKEN, { maxAttempts: 1 })
  broken() {
    throw new Error('always');
  }
}

/** The gauge's value for the subscription `babelqueue` of `topic`, as the SDK collects it now. */
async function gauge(name: string, topic: string): Promise<number | undefined> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
  const point = metric?.dataPoints.find(
    (p) => p.attributes['messaging.destination.name'] === `persistent://public/default/${topic}`,
  );
  return point?.value as number | undefined;
}

async function adminStats(topic: string, stats = 'stats') {
  const response = await fetch(
    `${webUrl()}/admin/v2/persistent/public/default/${topic}/${stats}?getPreciseBacklog=true&getEarliestTimeInBacklog=true`,
  );
  return (await response.json()) as {
    subscriptions: Record<string, { msgBacklog: number; earliestMsgPublishTimeInBacklog?: number }>;
  };
}

describe('lag gauges (broker)', () => {
  let started: INestMicroservice | undefined;
  const raw = rawClient();
  afterAll(() => raw.close());
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });

  it('follow the admin API: backlog and oldest age rise with a backlog, fall as it drains; the DLQ depth', async () => {
    const topic = uniqueTopic('lag');
    // A subscription on the dead-letter topic, so that the broker keeps what lands there.
    const dlqReader = await rawSubscribe(raw, `${topic}.dlq`, 'dlq-reader');
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const service = await startMicroservice(
      rootModule({
        imports: [
          BabelQueueModule.forRoot({
            serviceUrl: serviceUrl(),
            topic,
            consumer: { lagGauges: { adminUrl: webUrl(), intervalMs: 1000 } },
            logger: quietLogger,
          }),
        ],
        controllers: [Worker],
      }),
    );
    started = service.app;
    const publisher = service.app.get(BabelPulsarClient);
    await Promise.all(Array.from({ length: 12 }, (_, n) => publisher.publish(WORK, { n })));
    await Promise.all(Array.from({ length: 3 }, (_, n) => publisher.publish(BROKEN, { n })));

    // The handler holds the first message: the backlog stays put, and the gauge comes to the admin API's figure.
    await waitFor(
      'the broker sees the backlog',
      async () => (await adminStats(topic)).subscriptions.babelqueue!.msgBacklog >= 12,
    );
    const stats = await adminStats(topic);
    const expected = stats.subscriptions.babelqueue!.msgBacklog;
    await waitFor(
      'the backlog gauge',
      async () => (await gauge('babelqueue.subscription.backlog', topic)) === expected,
      10_000,
    );
    expect(await gauge('babelqueue.subscription.oldest_unacked_age', topic)).toBeGreaterThan(0);
    expect(stats.subscriptions.babelqueue!.earliestMsgPublishTimeInBacklog).toBeGreaterThan(0);

    open();
    await waitFor(
      'the backlog drains on the broker',
      async () => (await adminStats(topic)).subscriptions.babelqueue!.msgBacklog === 0,
      30_000,
    );
    await waitFor(
      'the backlog gauge falls to 0',
      async () => (await gauge('babelqueue.subscription.backlog', topic)) === 0,
      10_000,
    );
    expect(await gauge('babelqueue.subscription.oldest_unacked_age', topic)).toBe(0);

    const dlqBacklog = (await adminStats(`${topic}.dlq`)).subscriptions['dlq-reader']!.msgBacklog;
    expect(dlqBacklog).toBe(3);
    await waitFor(
      'the dead-letter depth gauge',
      async () => (await gauge('babelqueue.dead_letter.depth', topic)) === 3,
      10_000,
    );
    await dlqReader.close();
  });

  it("follow a partitioned topic: its partitions' sum rises with a backlog and falls as it drains", async () => {
    const topic = uniqueTopic('lag-partitioned');
    await createPartitionedTopic(webUrl(), topic, 3);
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    try {
      const service = await startMicroservice(
        rootModule({
          imports: [
            BabelQueueModule.forRoot({
              serviceUrl: serviceUrl(),
              topic,
              consumer: { lagGauges: { adminUrl: webUrl(), intervalMs: 1000 } },
              logger: quietLogger,
            }),
          ],
          controllers: [Worker],
        }),
      );
      started = service.app;
      const publisher = service.app.get(BabelPulsarClient);
      await Promise.all(Array.from({ length: 12 }, (_, n) => publisher.publish(WORK, { n })));

      const backlog = async () => (await adminStats(topic, 'partitioned-stats')).subscriptions.babelqueue!.msgBacklog;
      await waitFor('the broker sees the backlog over the partitions', async () => (await backlog()) >= 12);
      const expected = await backlog();
      await waitFor(
        'the backlog gauge',
        async () => (await gauge('babelqueue.subscription.backlog', topic)) === expected,
        10_000,
      );
      expect(await gauge('babelqueue.subscription.oldest_unacked_age', topic)).toBeGreaterThan(0);

      open();
      await waitFor('the backlog drains on the broker', async () => (await backlog()) === 0, 30_000);
      await waitFor(
        'the backlog gauge falls to 0',
        async () => (await gauge('babelqueue.subscription.backlog', topic)) === 0,
        10_000,
      );
      expect(await gauge('babelqueue.subscription.oldest_unacked_age', topic)).toBe(0);
    } finally {
      open();
      await started?.close();
      started = undefined;
      await deletePartitionedTopic(webUrl(), topic);
    }
  });
});
