// The autoscaling recipe of docs/operations.md#autoscaling-with-keda, checked on the broker with the client under
// test in a module-built app: the figure KEDA's Pulsar scaler reads (GET {adminURL}/admin/v2/persistent/{tenant}/
// {namespace}/{topic}/stats, the subscription's msgBacklog) and the library's backlog gauge (the Prometheus
// recipe's) both rise with a backlog and fall as the app drains it.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { rootModule, startMicroservice } from '../module/support/apps.js';
import { quietLogger, serviceUrl, uniqueTopic, waitFor, webUrl } from '../module/support/helpers.js';

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

const URN = 'urn:babel:autoscale:work';
const SUBSCRIPTION = 'billing';
/** The recipe's msgBacklogThreshold and activationMsgBacklogThreshold. */
const THRESHOLD = 10;
const ACTIVATION = 0;
const MESSAGES = 40;
let gate: Promise<void> = Promise.resolve();

@Controller()
class Worker {
  @BabelHandler(URN)
  async work() {
    await gate;
  }
}

/** What KEDA's Pulsar scaler reads: the plain stats URL (no query), the subscription's msgBacklog. */
async function kedaBacklog(topic: string): Promise<number> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`);
  if (!response.ok) throw new Error(`stats answered ${response.status}`);
  const stats = (await response.json()) as { subscriptions: Record<string, { msgBacklog: number }> };
  const subscription = stats.subscriptions[SUBSCRIPTION];
  // KEDA fails the scaler when the subscription is missing: the app must have subscribed first.
  if (subscription === undefined) throw new Error(`no subscription ${SUBSCRIPTION}`);
  return subscription.msgBacklog;
}

/** KEDA's decision from a backlog: replicas for an AverageValue target of THRESHOLD, and whether it is active. */
const kedaScale = (backlog: number) => ({
  replicas: Math.ceil(backlog / THRESHOLD),
  active: backlog > ACTIVATION,
});

/** The backlog gauge of the subscription, as the SDK collects it now (what a Prometheus exporter serves). */
async function backlogGauge(topic: string): Promise<number | undefined> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === 'babelqueue.subscription.backlog');
  const point = metric?.dataPoints.find(
    (p) =>
      p.attributes['messaging.destination.name'] === `persistent://public/default/${topic}` &&
      p.attributes['messaging.destination.subscription.name'] === SUBSCRIPTION,
  );
  return point?.value as number | undefined;
}

describe('the autoscaling recipe (broker)', () => {
  let started: INestMicroservice | undefined;
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });

  it("KEDA's msgBacklog and the backlog gauge rise with a backlog and fall as the app drains it", async () => {
    const topic = uniqueTopic('autoscale');
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const service = await startMicroservice(
      rootModule({
        imports: [
          BabelQueueModule.forRoot({
            serviceUrl: serviceUrl(),
            topic,
            consumer: { subscription: SUBSCRIPTION, lagGauges: { adminUrl: webUrl(), intervalMs: 1000 } },
            logger: quietLogger,
          }),
        ],
        controllers: [Worker],
      }),
    );
    started = service.app;
    // Subscribed and idle: KEDA would keep the deployment at its minimum.
    expect(kedaScale(await kedaBacklog(topic))).toEqual({ replicas: 0, active: false });

    // The library's producer does not batch: each message is one entry, what the scaler's figure counts.
    const publisher = service.app.get(BabelPulsarClient);
    await Promise.all(Array.from({ length: MESSAGES }, (_, n) => publisher.publish(URN, { n })));
    await waitFor('the backlog KEDA reads rises', async () => (await kedaBacklog(topic)) >= MESSAGES - 1, 15_000);
    const peak = await kedaBacklog(topic);
    expect(kedaScale(peak).active).toBe(true);
    expect(kedaScale(peak).replicas).toBeGreaterThanOrEqual(Math.floor(MESSAGES / THRESHOLD));
    await waitFor('the backlog gauge rises', async () => ((await backlogGauge(topic)) ?? 0) >= MESSAGES - 1, 10_000);

    open();
    await waitFor('the backlog KEDA reads falls to 0', async () => (await kedaBacklog(topic)) === 0, 30_000);
    expect(kedaScale(0)).toEqual({ replicas: 0, active: false });
    await waitFor('the backlog gauge falls to 0', async () => (await backlogGauge(topic)) === 0, 10_000);
    console.log(`autoscaling recipe: msgBacklog ${peak} at the peak (${kedaScale(peak).replicas} replicas), then 0`);
  });
});
