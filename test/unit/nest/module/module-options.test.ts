// BabelQueueModule option validation: each error names the option and what is allowed.
import 'reflect-metadata';
import { BabelQueueOptionsError } from '../../../../lib/index.js';
import { resolveModuleOptions } from '../../../../lib/nest/module/module-options.js';
import { FakeClient } from '../support/fake-client.js';

const client = new FakeClient();

describe('resolveModuleOptions', () => {
  it('fills the server options: topics from topic, the server table defaults, dead-lettering on', () => {
    const resolved = resolveModuleOptions({ serviceUrl: 'http://localhost:8080', topic: 'orders' });
    expect(resolved.source).toEqual({ kind: 'websocket', serviceUrl: 'http://localhost:8080' });
    expect(resolved.topic).toBe('orders');
    expect(resolved.server).toMatchObject({
      topics: ['orders'],
      deadLetter: true,
      subscription: 'babelqueue',
      subscriptionType: 'Shared',
      maxAttempts: 3,
      retry: 'republish',
      brokerAtStart: 'required',
      telemetry: { tracing: true, metrics: true },
    });
    expect(resolved.hooks).toEqual({ kind: 'none' });
  });

  it('picks the native client for pulsar:// and pulsar+ssl://', () => {
    expect(resolveModuleOptions({ serviceUrl: 'pulsar://localhost:6650', topic: 't' }).source.kind).toBe('native');
    expect(resolveModuleOptions({ serviceUrl: 'pulsar+ssl://broker:6651', topic: 't' }).source.kind).toBe('native');
    expect(resolveModuleOptions({ serviceUrl: 'wss://broker:8443', topic: 't' }).source.kind).toBe('websocket');
  });

  it('passes the consumer settings through', () => {
    const resolved = resolveModuleOptions({
      client,
      topic: 'orders',
      consumer: {
        topics: ['orders', 'invoices'],
        subscription: 'billing',
        subscriptionType: 'KeyShared',
        maxAttempts: 5,
        retry: 'nack',
        deadLetter: 'graveyard',
        concurrency: 4,
        receiverQueueSize: 0,
        shutdownTimeoutMs: 0,
        receiveTimeoutMs: 250,
      },
    });
    expect(resolved.source).toEqual({ kind: 'provided', client });
    expect(resolved.server).toMatchObject({
      topics: ['orders', 'invoices'],
      subscription: 'billing',
      subscriptionType: 'KeyShared',
      maxAttempts: 5,
      retry: 'nack',
      deadLetter: 'graveyard',
      concurrency: 4,
      receiverQueueSize: 0,
      shutdownTimeoutMs: 0,
      receiveTimeoutMs: 250,
    });
  });

  it('turns dead-lettering off with deadLetter: false', () => {
    expect(resolveModuleOptions({ client, topic: 'orders', consumer: { deadLetter: false } }).server.deadLetter).toBe(
      false,
    );
  });

  it('accepts hooks as functions or as a class with hook methods', () => {
    const onError = () => undefined;
    expect(resolveModuleOptions({ client, topic: 't', hooks: { onError } }).hooks).toEqual({
      kind: 'object',
      hooks: { onError },
    });
    class Base {
      onError() {}
    }
    class MyHooks extends Base {
      onDeadLetter() {}
    }
    expect(resolveModuleOptions({ client, topic: 't', hooks: MyHooks }).hooks).toEqual({
      kind: 'class',
      type: MyHooks,
      methods: ['onError', 'onDeadLetter'],
    });
  });

  it.each<[string, unknown, RegExp]>([
    ['no options', undefined, /needs an options object/],
    ['neither serviceUrl nor client', { topic: 't' }, /options\.serviceUrl .* or options\.client is required/],
    ['both serviceUrl and client', { serviceUrl: 'http://x', client, topic: 't' }, /either serviceUrl or client/],
    [
      'an unknown scheme',
      { serviceUrl: 'amqp://x', topic: 't' },
      /options\.serviceUrl "amqp:\/\/x" has an unsupported scheme .*pulsar:\/\/ or pulsar\+ssl:\/\/.*http:\/\//,
    ],
    ['a non-URL', { serviceUrl: 'localhost:6650x', topic: 't' }, /options\.serviceUrl/],
    ['a blank serviceUrl', { serviceUrl: ' ', topic: 't' }, /options\.serviceUrl must be a non-blank URL/],
    ['a non-client', { client: {}, topic: 't' }, /options\.client must be a Pulsar client/],
    [
      'auth with a ready client',
      { client, topic: 't', auth: { token: 'x' } },
      /options\.auth and options\.clientOptions apply to a client created from serviceUrl/,
    ],
    ['a blank token', { serviceUrl: 'http://x', topic: 't', auth: { token: ' ' } }, /options\.auth must be \{ token/],
    [
      'an auth with other keys',
      { serviceUrl: 'http://x', topic: 't', auth: { token: 'a', user: 'b' } },
      /options\.auth must be \{ token/,
    ],
    ['no topic at all', { client }, /options\.topic .* or options\.consumer\.topics is required/],
    ['a blank topic', { client, topic: '  ' }, /options\.topic must be a non-blank string, a topic name/],
    ['a malformed topic', { client, topic: 'a/b' }, /options\.topic: Invalid topic name "a\/b"/],
    [
      'an unknown option',
      { client, topic: 't', topics: ['x'] },
      /options\.topics is not an option \(it belongs in options\.consumer\.topics\); allowed: serviceUrl/,
    ],
    [
      'a misspelt isGlobal: the list names the registration keys too',
      { client, topic: 't', isGlobl: true },
      /options\.isGlobl is not an option; allowed: serviceUrl, .*, isGlobal, name$/,
    ],
    [
      "isGlobal in a forRootAsync factory's result",
      { client, topic: 't', isGlobal: true },
      /options\.isGlobal is not an option here \(forRootAsync takes isGlobal beside useFactory/,
    ],
    [
      'an unknown consumer option',
      { client, topic: 't', consumer: { prefetch: 1 } },
      /options\.consumer\.prefetch is not an option; allowed: topics/,
    ],
    [
      'a blank consumer topic',
      { client, topic: 't', consumer: { topics: ['a', ''] } },
      /options\.consumer\.topics\[1\]/,
    ],
    [
      'a topic listed twice',
      { client, consumer: { topics: ['a', 'a'] } },
      /options\.consumer\.topics lists a topic twice/,
    ],
    [
      'maxAttempts 0',
      { client, topic: 't', consumer: { maxAttempts: 0 } },
      /options\.consumer\.maxAttempts must be an integer >= 1, got the number 0/,
    ],
    [
      'maxAttempts as a string (read from an environment variable)',
      { client, topic: 't', consumer: { maxAttempts: '3' } },
      /options\.consumer\.maxAttempts must be an integer >= 1, got the string "3"/,
    ],
    [
      'a publishTimeoutMs that is not a whole number',
      { client, topic: 't', publishTimeoutMs: '5000' },
      /options\.publishTimeoutMs must be a whole number of ms >= 0 \(0 = no time-out\), got the string "5000"/,
    ],
    [
      'a fractional concurrency',
      { client, topic: 't', consumer: { concurrency: 1.5 } },
      /options\.consumer\.concurrency must be an integer >= 1/,
    ],
    [
      'a negative shutdown timeout',
      { client, topic: 't', consumer: { shutdownTimeoutMs: -1 } },
      /options\.consumer\.shutdownTimeoutMs must be an integer >= 0/,
    ],
    [
      'a negative receiverQueueSize',
      { client, topic: 't', consumer: { receiverQueueSize: -1 } },
      /options\.consumer\.receiverQueueSize must be an integer >= 0/,
    ],
    [
      'an unknown subscription type',
      { client, topic: 't', consumer: { subscriptionType: 'Sharded' } },
      /options\.consumer\.subscriptionType must be one of Exclusive, Shared, KeyShared, Failover/,
    ],
    [
      'nack on Exclusive',
      { client, topic: 't', consumer: { retry: 'nack', subscriptionType: 'Exclusive' } },
      /options\.consumer\.retry 'nack' needs a Shared or KeyShared subscription/,
    ],
    [
      'a maxPerSecond of 0',
      { client, topic: 't', consumer: { maxPerSecond: 0 } },
      /options\.consumer\.maxPerSecond must be a positive number, got the number 0/,
    ],
    [
      'a dispatchRate of 0.5 a second',
      { client, topic: 't', consumer: { dispatchRate: { perSecond: 0.5 } } },
      /options\.consumer\.dispatchRate\.perSecond must be an integer >= 1, got the number 0\.5/,
    ],
    [
      'a circuitBreaker ratio above 1',
      { client, topic: 't', consumer: { circuitBreaker: { failureRatio: 2 } } },
      /options\.consumer\.circuitBreaker\.failureRatio must be a number in \(0, 1\], got 2/,
    ],
    [
      'release on Failover',
      { client, topic: 't', consumer: { unknownUrn: 'release', subscriptionType: 'Failover' } },
      /options\.consumer\.unknownUrn 'release' needs a Shared or KeyShared subscription \(got Failover\)/,
    ],
    [
      'an unknown unknownUrn strategy',
      { client, topic: 't', consumer: { unknownUrn: 'ignore' } },
      /options\.consumer\.unknownUrn must be 'fail', 'dead_letter', 'delete' or 'release', got the string "ignore"/,
    ],
    [
      'an unknown retry',
      { client, topic: 't', consumer: { retry: 'later' } },
      /options\.consumer\.retry must be 'republish', 'retry-topic' or 'nack', got the string "later"/,
    ],
    [
      'a numeric deadLetter',
      { client, topic: 't', consumer: { deadLetter: 1 } },
      /options\.consumer\.deadLetter must be true \(<topic>\.dlq\), false/,
    ],
    [
      'a blank subscription',
      { client, topic: 't', consumer: { subscription: ' ' } },
      /options\.consumer\.subscription must be a non-blank string/,
    ],
    [
      'hooks that are not functions',
      { client, topic: 't', hooks: { onError: 'log' } },
      /options\.hooks\.onError must be a function/,
    ],
    [
      'a misspelt hook',
      { client, topic: 't', hooks: { onSuccess: () => {} } },
      /options\.hooks\.onSuccess is not a hook; allowed: onError, onUnknownUrn, onRoutingMismatch, onDeadLetter/,
    ],
    [
      'a hooks class without hooks',
      { client, topic: 't', hooks: class Empty {} },
      /hooks class Empty has none of the hook methods/,
    ],
    [
      'a logger without methods',
      { client, topic: 't', logger: {} },
      /options\.logger must have log, warn and error methods/,
    ],
  ])('rejects %s', (_name, options, message) => {
    let thrown: unknown;
    try {
      resolveModuleOptions(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BabelQueueOptionsError);
    expect((thrown as Error).message).toMatch(/^Invalid BabelQueueModule options: /);
    expect((thrown as Error).message).toMatch(message);
  });
});
