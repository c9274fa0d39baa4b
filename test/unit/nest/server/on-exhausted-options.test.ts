// The onExhausted option without a broker: where it may be given, how a subscription's handlers agree on it, and
// that blocking a key needs the key's lane (ordering 'key').
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import type { MessageHandler } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarServer } from '../../../../lib/index.js';
import { resolveServerOptions } from '../../../../lib/nest/server/server-options.js';
import { planSubscriptions } from '../../../../lib/nest/server/subscription-plan.js';
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

describe('onExhausted option', () => {
  const client = new InMemoryPulsar();

  it("defaults to 'dead-letter' and takes 'block-key'; anything else is refused", () => {
    expect(resolveServerOptions({ client, topics: 'orders' }).onExhausted).toBe('dead-letter');
    expect(resolveServerOptions({ client, topics: 'orders', onExhausted: 'block-key' }).onExhausted).toBe('block-key');
    expect(() => new BabelPulsarServer({ client, topics: 'orders', onExhausted: 'stop' as 'block-key' })).toThrow(
      /onExhausted must be 'dead-letter' or 'block-key'/,
    );
  });

  it("plans each subscription's value: the handlers' agreed one, else the server's, only where ordering is 'key'", () => {
    const settings = resolveServerOptions({ client, topics: 'orders', ordering: 'key' });
    const [byHandler] = planSubscriptions([bindingOf(route('A.a', { onExhausted: 'block-key' }))], settings, fail);
    expect(byHandler!.intake.onExhausted).toBe('block-key');
    const server = resolveServerOptions({ client, topics: 'orders', onExhausted: 'block-key' });
    const [unordered] = planSubscriptions([bindingOf(route('A.a'))], server, fail);
    expect(unordered!.intake.onExhausted).toBe('dead-letter');
    const [ordered] = planSubscriptions([bindingOf(route('A.a', { ordering: 'key' }))], server, fail);
    expect(ordered!.intake.onExhausted).toBe('block-key');
  });

  it("refuses handlers that disagree, and a handler's 'block-key' without ordering 'key'", () => {
    const settings = resolveServerOptions({ client, topics: 'orders', ordering: 'key' });
    expect(() =>
      planSubscriptions(
        [bindingOf(route('A.a', { onExhausted: 'block-key' }), route('B.b', { onExhausted: 'dead-letter' }))],
        settings,
        fail,
      ),
    ).toThrow(/A\.a and B\.b share the consumer .* different onExhausted/);
    const unordered = resolveServerOptions({ client, topics: 'orders' });
    expect(() => planSubscriptions([bindingOf(route('A.a', { onExhausted: 'block-key' }))], unordered, fail)).toThrow(
      /A\.a asks for onExhausted 'block-key' .* whose ordering is 'none'/,
    );
  });

  it('is taken by @BabelHandler and by a handlers entry', () => {
    expect(() => {
      @Controller()
      class Ledger {
        @BabelHandler('urn:x:posted', { ordering: 'key', onExhausted: 'block-key' })
        handle() {}
      }
      return Ledger;
    }).not.toThrow();
    expect(checkHandlerSettingsMap({ 'urn:x': { onExhausted: 'block-key' } }, 'handlers', fail)).toEqual({
      'urn:x': { onExhausted: 'block-key' },
    });
    expect(() => checkHandlerSettingsMap({ 'urn:x': { onExhausted: 'never' } }, 'handlers', fail)).toThrow(
      /onExhausted must be 'dead-letter' or 'block-key'/,
    );
  });
});
