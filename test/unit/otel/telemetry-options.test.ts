// The `telemetry` option (tracing / metrics switches): its values, and the errors the module, the server and the
// client raise for a bad one, each naming the option.
import 'reflect-metadata';
import {
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueError,
  BabelQueueOptionsError,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { resolveModuleOptions } from '../../../lib/nest/module/module-options.js';
import { resolveServerOptions } from '../../../lib/nest/server/server-options.js';
import { resolveTelemetry } from '../../../lib/otel/telemetry-options.js';
import { FakeClient } from '../nest/support/fake-client.js';

const client = new FakeClient() as unknown as PulsarClientLike;

describe('resolveTelemetry', () => {
  it.each([
    [undefined, { tracing: true, metrics: true }],
    [true, { tracing: true, metrics: true }],
    [false, { tracing: false, metrics: false }],
    [{}, { tracing: true, metrics: true }],
    [{ tracing: false }, { tracing: false, metrics: true }],
    [{ metrics: false }, { tracing: true, metrics: false }],
    [
      { tracing: true, metrics: false },
      { tracing: true, metrics: false },
    ],
  ])('%p gives %p', (value, expected) => {
    expect(resolveTelemetry(value, 'options.telemetry')).toEqual(expected);
  });

  it.each([
    ['off', /options\.telemetry must be true, false or \{ tracing\?: boolean, metrics\?: boolean \}, got "off"/],
    [0, /options\.telemetry must be .*, got 0/],
    [null, /options\.telemetry must be .*, got null/],
    [[], /options\.telemetry must be .*, got an array/],
    [{ tracing: 'no' }, /options\.telemetry\.tracing must be true or false, got "no"/],
    [{ metrics: 1 }, /options\.telemetry\.metrics must be true or false, got 1/],
    [{ traces: false }, /options\.telemetry\.traces is not an option; allowed: tracing, metrics/],
  ])('refuses %p', (value, message) => {
    expect(() => resolveTelemetry(value, 'options.telemetry')).toThrow(TypeError);
    expect(() => resolveTelemetry(value, 'options.telemetry')).toThrow(message);
  });
});

describe('telemetry in BabelQueueModule options', () => {
  it('passes the resolved switches to the server and the publisher', () => {
    const resolved = resolveModuleOptions({ client, topic: 'orders', telemetry: { tracing: false } });
    expect(resolved.telemetry).toEqual({ tracing: false, metrics: true });
    expect(resolved.server.telemetry).toEqual({ tracing: false, metrics: true });
    expect(resolveModuleOptions({ client, topic: 'orders', telemetry: false }).server.telemetry).toEqual({
      tracing: false,
      metrics: false,
    });
  });

  it('leaves everything on when not given', () => {
    const resolved = resolveModuleOptions({ client, topic: 'orders' });
    expect(resolved.telemetry).toBeUndefined();
    expect(resolved.server.telemetry).toEqual({ tracing: true, metrics: true });
  });

  it('refuses a bad value with a BabelQueueOptionsError naming it', () => {
    const bad = () => resolveModuleOptions({ client, topic: 'orders', telemetry: { metrics: 'off' } as never });
    expect(bad).toThrow(BabelQueueOptionsError);
    expect(bad).toThrow('Invalid BabelQueueModule options: options.telemetry.metrics must be true or false, got "off"');
    expect(() => resolveModuleOptions({ client, topic: 'orders', telemetry: 'yes' as never })).toThrow(
      /options\.telemetry must be true, false or/,
    );
  });

  it('does not take telemetry inside options.consumer', () => {
    expect(() => resolveModuleOptions({ client, topic: 'orders', consumer: { telemetry: false } as never })).toThrow(
      /options\.consumer\.telemetry is not an option/,
    );
  });
});

describe('telemetry on BabelPulsarServer and BabelPulsarClient', () => {
  it('server: on by default, switches per signal, a TypeError for a bad value', () => {
    expect(resolveServerOptions({ client, topics: 'orders' }).telemetry).toEqual({ tracing: true, metrics: true });
    expect(resolveServerOptions({ client, topics: 'orders', telemetry: { metrics: false } }).telemetry).toEqual({
      tracing: true,
      metrics: false,
    });
    expect(() => new BabelPulsarServer({ client, topics: 'orders', telemetry: { spans: false } as never })).toThrow(
      /options\.telemetry\.spans is not an option; allowed: tracing, metrics/,
    );
  });

  it('client: accepts the same values, a BabelQueueError for a bad one', () => {
    expect(() => new BabelPulsarClient({ client, telemetry: false })).not.toThrow();
    expect(() => new BabelPulsarClient({ client, telemetry: { tracing: false, metrics: true } })).not.toThrow();
    const bad = () => new BabelPulsarClient({ client, telemetry: { tracing: 'false' } as never });
    expect(bad).toThrow(BabelQueueError);
    expect(bad).toThrow('options.telemetry.tracing must be true or false, got "false"');
  });
});
