// The ordering option without a broker: where it may be given, how a subscription's handlers agree on it, what it is
// refused with, and the retry delays it accepts where Pulsar would ignore them.
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { BabelHandler, BabelPulsarServer } from '../../../../lib/index.js';
import type { MessageHandler } from '@nestjs/microservices';
import { resolveServerOptions } from '../../../../lib/nest/server/server-options.js';
import { planSubscriptions } from '../../../../lib/nest/server/subscription-plan.js';
import { routeOf } from '../../../../lib/nest/server/handler-registration.js';
import type { Binding, Route } from '../../../../lib/nest/server/handler-routes.js';
import { checkHandlerSettingsMap } from '../../../../lib/nest/options/handler-settings.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';

const handler = (() => Promise.resolve()) as unknown as MessageHandler;
const route = (name: string, more: Partial<Route> = {}): Route => ({ handler, name, ...more });
const bindingOf = (...routes: Route[]): Binding => ({
  topic: 'orders',
  subscription: 'babelqueue',
  routes: new Map(routes.map((each, index) => [`urn:x:${index}`, each])),
});
const fail = (problem: string): never => {
  throw new TypeError(problem);
};

describe('ordering option', () => {
  const client = new InMemoryPulsar();

  it("defaults to 'none' and takes 'key'; anything else is refused naming both", () => {
    expect(resolveServerOptions({ client, topics: 'orders' }).ordering).toBe('none');
    expect(resolveServerOptions({ client, topics: 'orders', ordering: 'key' }).ordering).toBe('key');
    expect(() => new BabelPulsarServer({ client, topics: 'orders', ordering: 'fifo' as 'key' })).toThrow(
      /ordering must be 'key' or 'none', got the string "fifo"/,
    );
  });

  it("plans each subscription's ordering: the handlers' agreed value, else the server's", () => {
    const settings = resolveServerOptions({ client, topics: 'orders' });
    const [byHandler] = planSubscriptions([bindingOf(route('A.a', { ordering: 'key' }), route('B.b'))], settings, fail);
    expect(byHandler!.intake.ordering).toBe('key');
    expect(byHandler!.intake.delayRefusal).toBeNull();
    const [byServer] = planSubscriptions(
      [bindingOf(route('A.a'))],
      resolveServerOptions({ client, topics: 'orders', ordering: 'key' }),
      fail,
    );
    expect(byServer!.intake.ordering).toBe('key');
  });

  it('refuses two handlers of one subscription that disagree', () => {
    const settings = resolveServerOptions({ client, topics: 'orders' });
    expect(() =>
      planSubscriptions(
        [bindingOf(route('A.a', { ordering: 'key' }), route('B.b', { ordering: 'none' }))],
        settings,
        fail,
      ),
    ).toThrow(/A\.a and B\.b share the consumer of topic orders .* different ordering \(key, none\)/);
  });

  it('refuses a batch handler on a subscription ordered by key', () => {
    const settings = resolveServerOptions({ client, topics: 'orders', ordering: 'key' });
    const batch = { maxMessages: 10, maxWaitMs: 100 };
    expect(() => planSubscriptions([bindingOf(route('A.batch', { batch }))], settings, fail)).toThrow(
      /A\.batch is a batch handler .* ordering is 'key'/,
    );
    expect(() => routeOf(handler, { handler: 'A.batch', batch }, false, settings)).toThrow(
      /A\.batch is a batch handler: ordering 'key' runs one message of a key at a time/,
    );
  });

  it("refuses @BabelHandler batch with ordering 'key'", () => {
    expect(() => {
      @Controller()
      class Batches {
        @BabelHandler('urn:x:batch', { ordering: 'key', batch: { maxMessages: 10, maxWaitMs: 100 } })
        handle() {}
      }
      return Batches;
    }).toThrow(/@BabelHandler batch cannot be combined with ordering 'key'/);
  });

  it('accepts a retry policy on Failover with ordering key (the delay is waited for in place)', () => {
    const retryPolicy = { backoff: 'fixed' as const, initialDelayMs: 100 };
    expect(
      () =>
        new BabelPulsarServer({ client, topics: 'orders', subscriptionType: 'Failover', ordering: 'key', retryPolicy }),
    ).not.toThrow();
    expect(
      () => new BabelPulsarServer({ client, topics: 'orders', subscriptionType: 'Failover', retryPolicy }),
    ).toThrow(/retryPolicy needs a Shared or KeyShared subscription/);
    const settings = resolveServerOptions({ client, topics: 'orders', subscriptionType: 'Failover' });
    expect(() => routeOf(handler, { handler: 'A.a', retryPolicy, ordering: 'key' }, false, settings)).not.toThrow();
    expect(() => routeOf(handler, { handler: 'A.a', retryPolicy }, false, settings)).toThrow(/retryPolicy needs/);
  });

  it('is a setting of the handlers option', () => {
    expect(checkHandlerSettingsMap({ 'urn:a': { ordering: 'key' } }, 'handlers', fail)).toEqual({
      'urn:a': { ordering: 'key' },
    });
    expect(() => checkHandlerSettingsMap({ 'urn:a': { ordering: 'strict' } }, 'handlers', fail)).toThrow(
      /handlers\["urn:a"\]\.ordering must be 'key' or 'none'/,
    );
  });
});
