// Handler settings from configuration: the pure rules, then a server and a module (forRootAsync with a
// ConfigService) on the testing kit.
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler } from '../../../../lib/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';
import {
  applyHandlerSettings,
  checkHandlerSettingsMap,
  settingsLine,
} from '../../../../lib/nest/options/handler-settings.js';
import { raiseStandardError } from '../../../../lib/options/option-table.js';
import { startService } from '../../../support/nest-app.js';
import { expectConfiguredFor } from '../../../support/configured-app.js';
import { publishTo } from '../../../support/batch-scenario.js';
import { recordingLogger, until } from '../../../support/recording.js';

const defaults = {
  topic: 'orders',
  subscription: 'babelqueue',
  subscriptionType: 'Shared',
  maxAttempts: 3,
  retryPolicy: undefined,
  concurrency: 1,
  unknownUrn: 'fail',
  ordering: 'none',
  onExhausted: 'dead-letter',
  inbox: false,
  circuitBreaker: undefined,
  maxPerSecond: undefined,
};

describe('handler settings (pure)', () => {
  it('Controller.method wins over the URN, which wins over the decorator; the rest is the server', () => {
    const applied = applyHandlerSettings(
      { 'urn:a': { topic: 'by-urn', maxAttempts: 2 }, 'A.handle': { maxAttempts: 7 } },
      'urn:a',
      'A.handle',
      { topic: 'declared', subscription: 'declared-sub' },
    );
    expect(applied.settings).toEqual({ topic: 'by-urn', subscription: 'declared-sub', maxAttempts: 7 });
    expect(applied.sources).toEqual({
      topic: { from: 'handlers', key: 'urn:a' },
      subscription: { from: 'decorator' },
      subscriptionType: { from: 'server' },
      maxAttempts: { from: 'handlers', key: 'A.handle' },
      retryPolicy: { from: 'server' },
      concurrency: { from: 'server' },
      unknownUrn: { from: 'server' },
      ordering: { from: 'server' },
      onExhausted: { from: 'server' },
      inbox: { from: 'server' },
      circuitBreaker: { from: 'server' },
      maxPerSecond: { from: 'server' },
    });
    expect(settingsLine('A.handle', 'urn:a', applied, defaults, 'handlers')).toBe(
      'handler settings of A.handle (urn:a): topic "by-urn" from handlers["urn:a"], subscription "declared-sub" ' +
        'from @BabelHandler, subscriptionType "Shared" from the server, maxAttempts 7 from handlers["A.handle"], ' +
        'retryPolicy none from the server, concurrency 1 from the server, unknownUrn "fail" from the server, ' +
        'ordering "none" from the server, inbox false from the server',
    );
  });

  it("the decorator's settingsKey names the entry that wins over Controller.method and the URN", () => {
    const applied = applyHandlerSettings(
      {
        'payments.charge': { concurrency: 8 },
        'A.handle': { concurrency: 2, maxAttempts: 4 },
        'urn:a': { topic: 't' },
      },
      'urn:a',
      'A.handle',
      {},
      'payments.charge',
    );
    expect(applied.settings).toEqual({ concurrency: 8, maxAttempts: 4, topic: 't' });
    expect(applied.sources.concurrency).toEqual({ from: 'handlers', key: 'payments.charge' });
  });

  it('refuses an unknown setting, a bad value and a non-object, naming where', () => {
    const check = (value: unknown) => () => checkHandlerSettingsMap(value, 'options.handlers', raiseStandardError);
    expect(check({ 'urn:a': { topics: 'x' } })).toThrow(
      /options\.handlers\["urn:a"\]\.topics is not an option; allowed: topic, subscription, subscriptionType/,
    );
    expect(check({ 'urn:a': { maxAttempts: 0 } })).toThrow(/options\.handlers\["urn:a"\]\.maxAttempts/);
    expect(check({ 'urn:a': { subscriptionType: 'Fast' } })).toThrow(/subscriptionType/);
    expect(check({ 'urn:a': 'orders' })).toThrow(/must be an object of handler settings/);
    expect(check(['urn:a'])).toThrow(/keyed by URN or Controller\.method/);
    expect(check({ 'urn:a': { concurrency: 4, topic: ' orders ' } })()).toEqual({
      'urn:a': { concurrency: 4, topic: 'orders' },
    });
  });
});

const calls: string[] = [];

@Controller()
class Orders {
  @BabelHandler('urn:cfg:orders:created', { topic: 'decorated-orders', maxAttempts: 5 })
  created(@Payload() data: { n: number }) {
    calls.push(`created ${data.n}`);
  }

  @BabelHandler('urn:cfg:orders:failing', { maxAttempts: 5, settingsKey: 'orders.failing' })
  failing() {
    throw new Error('always');
  }
}

describe('handler settings on a server (testing kit)', () => {
  beforeEach(() => calls.splice(0));

  it('consumes the configured topic and attempts, and says where each value came from', async () => {
    const pulsar = new InMemoryPulsar();
    const { lines, logger } = recordingLogger();
    const service = await startService([Orders], {
      client: pulsar,
      topics: 'home',
      logger,
      handlers: {
        'urn:cfg:orders:created': { topic: 'configured-orders', concurrency: 4 },
        'orders.failing': { maxAttempts: 1 },
      },
    });
    try {
      await publishTo(pulsar, 'configured-orders', [['urn:cfg:orders:created', { n: 1 }]]);
      await publishTo(pulsar, 'home', [['urn:cfg:orders:failing', { n: 0 } as never]]);
      await until(() => service.settled.length === 2);
      expect(calls).toEqual(['created 1']);
      expect(service.settled.find((event) => event.urn === 'urn:cfg:orders:failing')?.action).toBe('dead-letter');
      expect(pulsar.backlog('decorated-orders')).toBe(0);
      expect(lines).toContain(
        'handler settings of Orders.created (urn:cfg:orders:created): topic "configured-orders" from ' +
          'handlers["urn:cfg:orders:created"], subscription "babelqueue" from the server, subscriptionType "Shared" ' +
          'from the server, maxAttempts 5 from @BabelHandler, retryPolicy none from the server, concurrency 4 from ' +
          'handlers["urn:cfg:orders:created"], unknownUrn "fail" from the server, ordering "none" from the server, ' +
          'inbox false from the server',
      );
      expect(lines.some((line) => line.includes('maxAttempts 1 from handlers["orders.failing"]'))).toBe(true);
      expect(service.server.describe().map(({ topic }) => topic)).toEqual(
        expect.arrayContaining(['configured-orders', 'home']),
      );
    } finally {
      await service.close();
    }
  });

  it('fails the start on a key that names no handler, listing those there are', async () => {
    await expect(
      startService([Orders], {
        client: new InMemoryPulsar(),
        topics: 'home',
        handlers: { 'urn:cfg:orders:typo': { maxAttempts: 2 } },
      }),
    ).rejects.toThrow(
      /handlers names no handler of this server: "urn:cfg:orders:typo" .*known: .*Orders\.created \(urn:cfg:orders:created\)/,
    );
  });

  it('refuses two handlers of one subscription whose settings give different concurrency', async () => {
    await expect(
      startService([Orders], {
        client: new InMemoryPulsar(),
        topics: 'home',
        handlers: {
          'urn:cfg:orders:created': { topic: 'home', concurrency: 2 },
          'urn:cfg:orders:failing': { concurrency: 3 },
        },
      }),
    ).rejects.toThrow(/Orders\.\w+ and Orders\.\w+ share the consumer of topic home .* different concurrency/);
  });
});

describe('one app, two environments, configured from ConfigService only (testing kit)', () => {
  it.each([
    [
      'staging',
      { HOME_TOPIC: 'stg-home', ORDERS_TOPIC: 'stg-orders', ORDERS_SUBSCRIPTION: 'stg', ORDERS_ATTEMPTS: '2' },
    ],
    [
      'production',
      { HOME_TOPIC: 'prd-home', ORDERS_TOPIC: 'prd-orders', ORDERS_SUBSCRIPTION: 'prd', ORDERS_ATTEMPTS: '9' },
    ],
  ])('%s', (_name, environment) => expectConfiguredFor(new InMemoryPulsar(), environment));
});
