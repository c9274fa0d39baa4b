// brokerAtStart: 'optional': the app boots while the broker does not answer, health reports down, and the
// consumers subscribe and the publisher's producer connects once it answers, with one log line each way for
// each. On the testing kit (its availability switch).
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  type BabelQueueModuleOptions,
} from '../../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar } from '../../../../lib/testing/index.js';

const handled: unknown[] = [];

@Controller()
class OrdersController {
  @BabelHandler('urn:babel:orders:created')
  created(@Payload() data: unknown): void {
    handled.push(data);
  }
}

async function boot(pulsar: InMemoryPulsar, extra: Partial<BabelQueueModuleOptions>) {
  const lines: Array<[string, string]> = [];
  const push = (level: string) => (message: unknown) => void lines.push([level, String(message)]);
  const logger = { log: push('log'), warn: push('warn'), error: push('error') };
  const moduleRef = await Test.createTestingModule({
    imports: [BabelQueueModule.forRoot({ client: pulsar, topic: 'orders', logger, startupWarnings: false, ...extra })],
    controllers: [OrdersController],
  }).compile();
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
  return { app, moduleRef, lines };
}

const waitUntil = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe("brokerAtStart: 'optional'", () => {
  it('loses nothing the app publishes when the broker is back but its consumers have not subscribed yet', async () => {
    const pulsar = new InMemoryPulsar();
    pulsar.setAvailable(false);
    const { app, moduleRef, lines } = await boot(pulsar, { brokerAtStart: 'optional', publishTimeoutMs: 200 });
    await app.listen();
    const consuming = () =>
      lines.some(([, message]) => message.includes('the broker answered after') && message.includes('consuming'));
    pulsar.setAvailable(true);
    // Published at once, before the server's next attempt to subscribe (it waits at least 500 ms between them).
    await moduleRef.get(BabelPulsarClient).publish('urn:babel:orders:created', { n: 'while-subscribing' });
    expect(consuming()).toBe(false);
    await waitUntil(() => handled.some((data) => (data as { n?: unknown }).n === 'while-subscribing'));
    expect(consuming()).toBe(true);
    await app.close();
    handled.length = 0;
  });

  it('boots without the broker, reports down, then consumes once the broker answers', async () => {
    const pulsar = new InMemoryPulsar();
    pulsar.setAvailable(false);
    const { app, moduleRef, lines } = await boot(pulsar, { brokerAtStart: 'optional', publishTimeoutMs: 200 });
    await app.listen();
    const health = moduleRef.get(BabelQueueHealthIndicator);
    expect(health.isHealthy().babelqueue.status).toBe('down');
    await waitUntil(() => lines.filter(([, message]) => message.includes('did not answer at start')).length === 2);
    const waiting = lines.filter(([, message]) => message.includes('did not answer at start'));
    expect(waiting.map(([level]) => level)).toEqual(['warn', 'warn']);
    expect(waiting.filter(([, message]) => message.includes('without consuming'))).toHaveLength(1);
    expect(
      waiting.filter(([, message]) => message.includes('publishing to persistent://public/default/orders fails')),
    ).toHaveLength(1);

    // Publishing meanwhile fails within publishTimeoutMs, naming the topic.
    await expect(moduleRef.get(BabelPulsarClient).publish('urn:babel:orders:created', { n: 0 })).rejects.toThrow(
      /orders/,
    );

    pulsar.setAvailable(true);
    await waitUntil(() => lines.filter(([, message]) => message.includes('the broker answered after')).length === 2);
    expect(health.isHealthy().babelqueue.status).toBe('up');
    const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), pulsar);
    await moduleRef.get(BabelPulsarClient).publish('urn:babel:orders:created', { n: 1 }, { id: 'after-outage' });
    expect((await harness.outcome('after-outage')).kind).toBe('handled');
    expect(handled).toEqual([{ n: 1 }]);
    const answered = lines.filter(([, message]) => message.includes('the broker answered after'));
    expect(answered.map(([level, message]) => [level, message.replace(/after [\d.]+ s/, 'after N s')])).toEqual(
      expect.arrayContaining([
        ['log', 'the broker answered after N s: consuming persistent://public/default/orders'],
        ['log', 'the broker answered after N s: publishing to persistent://public/default/orders'],
      ]),
    );
    expect(answered).toHaveLength(2);
    await harness.close();
    await app.close();
  });

  it('a publisher-only app (no server started) logs its producer once each way', async () => {
    const pulsar = new InMemoryPulsar();
    pulsar.setAvailable(false);
    const lines: Array<[string, string]> = [];
    const push = (level: string) => (message: unknown) => void lines.push([level, String(message)]);
    const moduleRef = await Test.createTestingModule({
      imports: [
        BabelQueueModule.forRoot({
          client: pulsar,
          topic: 'billing',
          brokerAtStart: 'optional',
          logger: { log: push('log'), warn: push('warn'), error: push('error') },
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const waiting = () => lines.filter(([, message]) => message.includes('did not answer at start'));
    await waitUntil(() => waiting().length === 1);
    // Nothing consumes here, so the waiting producer alone turns health down.
    const health = moduleRef.get(BabelQueueHealthIndicator);
    expect(health.check().problems).toEqual([
      "the publisher's producer for persistent://public/default/billing is not connected (the broker did not answer at start)",
    ]);
    expect(waiting()[0]).toEqual([
      'warn',
      expect.stringContaining('publishing to persistent://public/default/billing fails (a PublishError'),
    ]);
    pulsar.setAvailable(true);
    await waitUntil(() => lines.some(([, message]) => message.includes('the broker answered after')));
    expect(health.isHealthy().babelqueue.status).toBe('up');
    await moduleRef.get(BabelPulsarClient).publish('urn:babel:billing:paid', { n: 1 });
    expect(pulsar.published('billing')).toHaveLength(1);
    expect(lines.map(([level]) => level)).toEqual(['warn', 'log']);
    await app.close();
  });

  it("logs nothing about the publisher with 'required' or when the broker answers at start", async () => {
    for (const brokerAtStart of ['required', 'optional'] as const) {
      const lines: string[] = [];
      const moduleRef = await Test.createTestingModule({
        imports: [
          BabelQueueModule.forRoot({
            client: new InMemoryPulsar(),
            topic: 'billing',
            brokerAtStart,
            logger: { log: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) },
          }),
        ],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await app.close();
      expect(lines).toEqual([]);
    }
  });

  it("by default ('required') the app fails to start, as before", async () => {
    const pulsar = new InMemoryPulsar();
    pulsar.setAvailable(false);
    const { app } = await boot(pulsar, {});
    await expect(app.listen()).rejects.toThrow(/ConnectError/);
    await app.close();
  });

  it('close() while waiting stops the retries', async () => {
    const pulsar = new InMemoryPulsar();
    pulsar.setAvailable(false);
    const { app, lines } = await boot(pulsar, { brokerAtStart: 'optional' });
    await app.listen();
    await app.close();
    pulsar.setAvailable(true);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(lines.some(([, message]) => message.includes('the broker answered'))).toBe(false);
  });

  it('refuses another value, naming its type', async () => {
    await expect(boot(new InMemoryPulsar(), { brokerAtStart: 'later' as unknown as 'optional' })).rejects.toThrow(
      /options\.brokerAtStart must be 'required' or 'optional', got the string "later"/,
    );
  });
});
