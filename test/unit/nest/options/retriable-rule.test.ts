// The isRetriable option: validated where it is accepted, and composed with the built-in Nest classification
// (handler rule, then the module's, then the built-in one; undefined falls through).
import 'reflect-metadata';
import { BadRequestException } from '@nestjs/common';
import { BabelHandler, BabelPulsarServer } from '../../../../lib/nest/index.js';
import { isRetriableNestFailure } from '../../../../lib/nest/pipeline/failure-classify.js';
import { resolveModuleOptions } from '../../../../lib/nest/module/module-options.js';
import {
  checkRetriableRule,
  composeRetriable,
  type RetriableRule,
} from '../../../../lib/nest/options/retriable-rule.js';
import type { PulsarClientLike } from '../../../../lib/pulsar/client-types.js';
import { BabelNonRetriableError } from '../../../../lib/envelope/index.js';
import { FakeProducer } from '../../../support/fakes.js';

const client = {
  createProducer: async () => new FakeProducer('x'),
  subscribe: async () => ({}),
  close: async () => {},
} as unknown as PulsarClientLike;

class GatewayDown extends Error {}
class CardDeclined extends Error {}

describe('composeRetriable', () => {
  const problems: string[] = [];
  const compose = (...rules: Array<RetriableRule | undefined>) =>
    composeRetriable(rules, isRetriableNestFailure, (problem) => problems.push(problem));
  beforeEach(() => problems.splice(0));

  it('is the built-in rule when no rule is given', () => {
    expect(compose(undefined, undefined)).toBe(isRetriableNestFailure);
  });

  it('asks the rules in order; the first true or false decides, undefined falls through to the built-in rule', () => {
    const handler: RetriableRule = (error) => (error instanceof CardDeclined ? false : undefined);
    const module: RetriableRule = (error) => (error instanceof GatewayDown ? true : undefined);
    const rule = compose(handler, module);
    expect(rule(new CardDeclined('declined'))).toBe(false);
    expect(rule(new GatewayDown('502'))).toBe(true);
    expect(rule(new Error('other'))).toBe(true);
    expect(rule(new BabelNonRetriableError('built-in says no'))).toBe(false);
    expect(rule(new BadRequestException('4xx'))).toBe(false);
  });

  it('a rule may overrule the built-in one both ways', () => {
    const rule = compose((error) => (error instanceof BadRequestException ? true : false));
    expect(rule(new BadRequestException('retry this 400'))).toBe(true);
    expect(rule(new Error('never retry'))).toBe(false);
  });

  it('passes over a rule that throws or answers something else, and reports it', () => {
    const rule = compose(
      () => {
        throw new Error('rule bug');
      },
      () => 'yes' as unknown as boolean,
    );
    expect(rule(new BabelNonRetriableError('x'))).toBe(false);
    expect(problems).toEqual([
      'isRetriable threw (rule bug); the next rule decides',
      'isRetriable returned the string "yes" instead of true, false or undefined; the next rule decides',
    ]);
  });
});

describe('the isRetriable option is a function', () => {
  const error = /must be a function \(error\) => boolean \| undefined, got the boolean true/;

  it('checkRetriableRule names the option', () => {
    expect(checkRetriableRule(undefined, 'x')).toBeUndefined();
    expect(() => checkRetriableRule(true, 'x.isRetriable')).toThrow(/^x\.isRetriable must be a function/);
  });

  it('@BabelHandler(urn, { isRetriable })', () => {
    expect(() => BabelHandler('urn:x', { isRetriable: true as unknown as RetriableRule })).toThrow(
      new RegExp(`^@BabelHandler isRetriable ${error.source}`),
    );
    expect(() => BabelHandler('urn:x', { isRetriable: () => undefined })).not.toThrow();
  });

  it('BabelPulsarServer options.isRetriable', () => {
    expect(
      () => new BabelPulsarServer({ client, topics: 'orders', isRetriable: true as unknown as RetriableRule }),
    ).toThrow(new RegExp(`^options\\.isRetriable ${error.source}`));
  });

  it('BabelQueueModule consumer.isRetriable', () => {
    expect(() =>
      resolveModuleOptions({
        serviceUrl: 'http://localhost:8080',
        topic: 'orders',
        consumer: { isRetriable: true as unknown as RetriableRule },
      }),
    ).toThrow(new RegExp(`Invalid BabelQueueModule options: options\\.consumer\\.isRetriable ${error.source}`));
    const rule: RetriableRule = () => undefined;
    const resolved = resolveModuleOptions({
      serviceUrl: 'http://localhost:8080',
      topic: 'orders',
      consumer: { isRetriable: rule },
    });
    expect(resolved.server.isRetriable).toBe(rule);
  });
});
