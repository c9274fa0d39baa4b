// Retry policy and non-retriable classification on the Nest side: option checks, @BabelHandler checks,
// HttpException detail and the default classification.
import 'reflect-metadata';
import { BadRequestException, ForbiddenException, HttpException, HttpStatus } from '@nestjs/common';
import { BabelNonRetriableError } from '../../../../lib/envelope/index.js';
import { BabelHandler, BabelPulsarServer, BabelQueueOptionsError } from '../../../../lib/nest/index.js';
import {
  describeNestFailure,
  httpExceptionDetail,
  isRetriableNestFailure,
} from '../../../../lib/nest/pipeline/failure-classify.js';
import { resolveModuleOptions } from '../../../../lib/nest/module/module-options.js';
import type { PulsarClientLike } from '../../../../lib/pulsar/client-types.js';
import { FakeProducer } from '../../../support/fakes.js';

const client = {
  createProducer: async () => new FakeProducer('x'),
  subscribe: async () => ({}),
  close: async () => {},
} as unknown as PulsarClientLike;
const retryPolicy = { backoff: 'exponential', initialDelayMs: 500, maxDelayMs: 4000, jitter: 0.1 } as const;

describe('server option retryPolicy', () => {
  it.each(['Shared', 'KeyShared'] as const)('is accepted on %s with retry by re-publish', (subscriptionType) => {
    expect(() => new BabelPulsarServer({ client, topics: 'orders', subscriptionType, retryPolicy })).not.toThrow();
  });

  it.each(['Exclusive', 'Failover'] as const)(
    'is refused on %s (Pulsar would ignore the delay)',
    (subscriptionType) => {
      expect(() => new BabelPulsarServer({ client, topics: 'orders', subscriptionType, retryPolicy })).toThrow(
        /options\.retryPolicy needs a Shared or KeyShared subscription \(got /,
      );
    },
  );

  it("is refused with retry 'nack'", () => {
    expect(() => new BabelPulsarServer({ client, topics: 'orders', retry: 'nack', retryPolicy })).toThrow(
      /options\.retryPolicy needs retry 'republish'.*nackRedeliverTimeoutMs/,
    );
  });

  it('is checked', () => {
    expect(
      () => new BabelPulsarServer({ client, topics: 'orders', retryPolicy: { backoff: 'fixed', initialDelayMs: -1 } }),
    ).toThrow(/options\.retryPolicy\.initialDelayMs/);
  });

  it('is a module consumer option too, checked under its module name', () => {
    const resolved = resolveModuleOptions({
      serviceUrl: 'pulsar://x:6650',
      topic: 'orders',
      consumer: { retryPolicy },
    });
    expect(resolved.server.retryPolicy).toEqual(retryPolicy);
    expect(() =>
      resolveModuleOptions({
        serviceUrl: 'pulsar://x:6650',
        topic: 'orders',
        consumer: { retryPolicy: { backoff: 'linear' as never, initialDelayMs: 1 } },
      }),
    ).toThrow(BabelQueueOptionsError);
  });
});

describe('@BabelHandler maxAttempts and retryPolicy', () => {
  it.each([0, 1.5, -2])('refuses maxAttempts %p', (maxAttempts) => {
    expect(() => BabelHandler('urn:x', { maxAttempts })).toThrow(/maxAttempts must be an integer >= 1/);
  });

  it('refuses a malformed retryPolicy', () => {
    expect(() => BabelHandler('urn:x', { retryPolicy: { backoff: 'fixed', initialDelayMs: 0 } })).toThrow(
      /@BabelHandler retryPolicy\.initialDelayMs/,
    );
  });

  it('is refused by a server whose subscription would ignore the delay, naming the handler', () => {
    class Orders {
      @BabelHandler('urn:babel:orders:created', { retryPolicy })
      created(): void {}
    }
    const server = new BabelPulsarServer({ client, topics: 'orders', subscriptionType: 'Exclusive' });
    const extras = Reflect.getMetadata('microservices:pattern_extras', Orders.prototype.created) as Record<
      string,
      unknown
    >;
    expect(() => server.addHandler('urn:babel:orders:created', async () => undefined, true, extras)).toThrow(
      /Orders\.created retryPolicy needs a Shared or KeyShared subscription/,
    );
  });
});

describe('non-retriable classification', () => {
  it('keeps the full detail of an HttpException', () => {
    const validation = new BadRequestException(['name must be a string', 'qty must not be less than 1']);
    expect(validation.message).toBe('Bad Request Exception');
    expect(httpExceptionDetail(validation)).toBe('name must be a string; qty must not be less than 1');
    expect(httpExceptionDetail(new ForbiddenException('not your order'))).toBe('not your order');
    expect(httpExceptionDetail(new HttpException('teapot', 418))).toBe('teapot');
  });

  it('describes an HttpException as an Error with its name, its detail and itself as cause', () => {
    const validation = new BadRequestException(['qty must be positive']);
    const described = describeNestFailure(validation) as Error;
    expect(described).toBeInstanceOf(Error);
    expect(described.name).toBe('BadRequestException');
    expect(described.message).toBe('qty must be positive');
    expect(described.cause).toBe(validation);
    expect(isRetriableNestFailure(described)).toBe(false);
  });

  it.each<[string, unknown, boolean]>([
    ['BabelNonRetriableError', new BabelNonRetriableError('no'), false],
    ['BadRequestException', new BadRequestException(), false],
    ['ForbiddenException', new ForbiddenException(), false],
    ['410 Gone', new HttpException('gone', HttpStatus.GONE), false],
    ['429 Too Many Requests', new HttpException('slow down', HttpStatus.TOO_MANY_REQUESTS), true],
    ['408 Request Timeout', new HttpException('timeout', HttpStatus.REQUEST_TIMEOUT), true],
    ['502 Bad Gateway', new HttpException('upstream', HttpStatus.BAD_GATEWAY), true],
    ['an Error', new Error('database down'), true],
    ['a thrown string', 'thrown text', true],
  ])('%s is retriable: %p', (_label, error, retriable) => {
    expect(isRetriableNestFailure(describeNestFailure(error))).toBe(retriable);
  });

  it('leaves other failures as they are', () => {
    const error = new TypeError('x');
    expect(describeNestFailure(error)).toBe(error);
  });
});
