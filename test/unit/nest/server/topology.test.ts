// Topology without a broker: which topic and subscription each handler lands on, the decorator's checks, the
// server's handler filtering by connection name, and the wording of the start-up warnings.
import 'reflect-metadata';
import { BabelHandler, BabelPulsarServer, BabelQueueModule } from '../../../../lib/index.js';
import { HandlerRoutes, type Route } from '../../../../lib/nest/server/handler-routes.js';
import { resolveModuleOptions } from '../../../../lib/nest/module/module-options.js';
import type { FoundPattern } from '../../../../lib/nest/module/startup-scan.js';
import { handlersOf, notStartedWarning, wiringWarnings } from '../../../../lib/nest/module/startup-warnings.js';
import type { PulsarClientLike } from '../../../../lib/pulsar/client-types.js';
import { FakeProducer } from '../../../support/fakes.js';

const route = (name: string): Route => ({ handler: async () => undefined, name });
const places = (routes: HandlerRoutes) =>
  routes.subscribed().map(({ topic, subscription, routes: map }) => ({ topic, subscription, urns: [...map.keys()] }));

describe('HandlerRoutes', () => {
  it("puts a handler without topic or subscription on every server topic through the server's subscription", () => {
    const routes = new HandlerRoutes(['orders', 'refunds'], 'babelqueue');
    routes.add('urn:a', route('A.a'));
    expect(places(routes)).toEqual([
      { topic: 'orders', subscription: 'babelqueue', urns: ['urn:a'] },
      { topic: 'refunds', subscription: 'babelqueue', urns: ['urn:a'] },
    ]);
  });

  it('subscribes the server topics without handlers only while no handler chose its own place', () => {
    const routes = new HandlerRoutes(['orders'], 'babelqueue');
    expect(places(routes)).toEqual([{ topic: 'orders', subscription: 'babelqueue', urns: [] }]);
    routes.add('urn:p', route('P.p'), { topic: 'payments' });
    expect(places(routes)).toEqual([{ topic: 'payments', subscription: 'babelqueue', urns: ['urn:p'] }]);
  });

  it('gives a handler with only a subscription the server topics, and one with only a topic the server subscription', () => {
    const routes = new HandlerRoutes(['orders'], 'babelqueue');
    routes.add('urn:a', route('A.a'), { subscription: 'audit' });
    routes.add('urn:b', route('B.b'), { topic: 'payments' });
    expect(places(routes)).toEqual([
      { topic: 'orders', subscription: 'audit', urns: ['urn:a'] },
      { topic: 'payments', subscription: 'babelqueue', urns: ['urn:b'] },
    ]);
  });

  it('treats a short and a full topic name as one topic', () => {
    const routes = new HandlerRoutes(['orders'], 'babelqueue');
    routes.add('urn:a', route('A.a'), { topic: 'persistent://public/default/orders' });
    routes.add('urn:b', route('B.b'));
    expect(places(routes)).toEqual([{ topic: 'orders', subscription: 'babelqueue', urns: ['urn:a', 'urn:b'] }]);
  });

  it('refuses one URN twice on one subscription, naming both; allows it on two subscriptions', () => {
    const routes = new HandlerRoutes(['orders'], 'babelqueue');
    routes.add('urn:a', route('A.a'), { subscription: 'billing' });
    routes.add('urn:a', route('B.a'), { subscription: 'audit' });
    expect(() => routes.add('urn:a', route('C.a'), { topic: 'orders', subscription: 'billing' })).toThrow(
      /two handlers for urn:a .*topic orders, subscription billing\): A\.a and C\.a/,
    );
  });

  it("knows a URN handled by another subscription of the same topic, not one of another topic's", () => {
    const routes = new HandlerRoutes(['orders'], 'babelqueue');
    routes.add('urn:paid', route('Billing.paid'), { subscription: 'billing' });
    routes.add('urn:created', route('Audit.created'), { subscription: 'audit' });
    routes.add('urn:refund', route('Refunds.refund'), { topic: 'refunds', subscription: 'audit' });
    const all = routes.subscribed();
    const audit = all.find((b) => b.topic === 'orders' && b.subscription === 'audit')!;
    expect(routes.handledBySibling(audit, 'urn:paid', all)).toBe(true);
    expect(routes.handledBySibling(audit, 'urn:refund', all)).toBe(false);
    expect(routes.handledBySibling(audit, 'urn:nobody', all)).toBe(false);
  });
});

describe('@BabelHandler topology options', () => {
  const decorate = (options: Parameters<typeof BabelHandler>[1]) => () => BabelHandler('urn:x', options);

  it.each([
    [{ topic: '' }, /topic must be a non-blank string/],
    [{ topic: 42 as unknown as string }, /topic must be a non-blank string/],
    [{ topic: 'persistent://only-tenant' }, /@BabelHandler topic:/],
    [{ subscription: '  ' }, /subscription must be a non-blank string/],
    [{ connection: '' }, /connection must be a non-blank string/],
    [{ maxAttempt: 3 } as never, /option\(s\) maxAttempt unknown; allowed: extras, timeoutMs, maxAttempts/],
    [null as never, /options must be an object/],
  ])('refuses %p', (options, message) => {
    expect(decorate(options)).toThrow(message);
  });
});

const client = {
  createProducer: async () => new FakeProducer('x'),
  subscribe: async () => ({}),
  close: async () => {},
} as unknown as PulsarClientLike;

describe('BabelPulsarServer and connection names', () => {
  const extras = (connection?: string) => ({
    babelqueue: { handler: 'H.h', ...(connection !== undefined && { connection }) },
  });

  it("registers only the handlers of its own connection (none: the unnamed one's)", () => {
    const unnamed = new BabelPulsarServer({ client, topics: 'orders' });
    const eu = new BabelPulsarServer({ client, topics: 'orders', name: 'eu' });
    for (const server of [unnamed, eu]) {
      server.addHandler('urn:main', async () => undefined, true, extras());
      server.addHandler('urn:eu', async () => undefined, true, extras('eu'));
    }
    expect([...unnamed.getHandlers().keys()]).toEqual(['urn:main']);
    expect([...eu.getHandlers().keys()]).toEqual(['urn:eu']);
    expect(eu.connectionName).toBe('eu');
  });

  it('refuses a blank name and a handler topic with a single retry producer', () => {
    expect(() => new BabelPulsarServer({ client, topics: 'orders', name: ' ' })).toThrow(/options.name/);
    const server = new BabelPulsarServer({ client, topics: 'orders', retry: new FakeProducer('orders') as never });
    expect(() =>
      server.addHandler('urn:x', async () => undefined, true, { babelqueue: { handler: 'H.x', topic: 'payments' } }),
    ).toThrow(/single producer/);
  });
});

describe('module options: name and startupWarnings', () => {
  const base = { serviceUrl: 'http://127.0.0.1:8080', topic: 'orders' };

  it('defaults startup warnings on, after 5 s', () => {
    expect(resolveModuleOptions(base).startupWarnings).toEqual({ enabled: true, serverNotStartedAfterMs: 5000 });
    expect(resolveModuleOptions({ ...base, startupWarnings: false }).startupWarnings.enabled).toBe(false);
    expect(
      resolveModuleOptions({ ...base, startupWarnings: { serverNotStartedAfterMs: 250 } }).startupWarnings,
    ).toEqual({ enabled: true, serverNotStartedAfterMs: 250 });
  });

  it.each([
    [{ serverNotStartedAfterMs: -1 }, /whole number of ms/],
    [{ serverNotStartedAfterMs: 1.5 }, /whole number of ms/],
    [{ after: 3 }, /startupWarnings.after is not an option/],
    ['yes', /must be true, false or/],
  ])('refuses startupWarnings %p', (startupWarnings, message) => {
    expect(() => resolveModuleOptions({ ...base, startupWarnings })).toThrow(message);
  });

  it.each(['', '  ', 7])('refuses the registration name %p at forRoot', (name) => {
    expect(() => BabelQueueModule.forRoot({ ...base, name: name as string })).toThrow(/name must be a non-blank/);
  });
});

describe('start-up warning lines', () => {
  const found = (overrides: Partial<FoundPattern>): FoundPattern => ({
    where: 'Orders.created',
    pattern: 'urn:babel:orders:created',
    role: 'controller',
    babel: { handler: 'Orders.created' },
    expectsReply: false,
    onThisTransport: true,
    ...overrides,
  });

  it('says nothing about a well-wired application', () => {
    expect(wiringWarnings([found({})], [undefined, 'eu'])).toEqual([]);
  });

  it('names a handler on a provider, several unnamed registrations, and unknown connections', () => {
    const warnings = wiringWarnings(
      [
        found({ role: 'provider', where: 'OrdersService.created' }),
        found({ where: 'A.x', babel: { handler: 'A.x', connection: 'pay' } }),
        found({ where: 'B.y', babel: { handler: 'B.y', connection: 'pay' } }),
      ],
      [undefined, undefined, 'eu'],
    );
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/^OrdersService\.created has @BabelHandler\('urn:babel:orders:created'\)/);
    expect(warnings[1]).toMatch(/registered 2 times without a name/);
    expect(warnings[2]).toMatch(/^A\.x, B\.y are bound to connection 'pay'.*registered: unnamed, 'eu'/);
  });

  it("lists a registration's handlers and tells how to start its server", () => {
    const patterns = [found({}), found({ where: 'Eu.x', babel: { handler: 'Eu.x', connection: 'eu' } })];
    expect(handlersOf(patterns, 'eu').map((p) => p.where)).toEqual(['Eu.x']);
    expect(notStartedWarning('eu', handlersOf(patterns, 'eu'), 5000)).toMatch(
      /BabelQueueModule \('eu'\) has 1 @BabelHandler method\(s\) \(Eu\.x\) but its server was not started 5 s .*getBabelServerToken\('eu'\)/,
    );
  });
});
