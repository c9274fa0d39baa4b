import type { UnknownUrnStrategy } from '../../consumer/unknown-urn.js';
import type { OnExhausted, Ordering } from '../options/ordering-option.js';
import { UseFilters, type Type } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { BABEL_HANDLER_EXTRAS, BABEL_TRANSPORT } from '../constants.js';
import type { RetryPolicy } from '../../consumer/index.js';
import type { CircuitBreakerOptions } from '../../consumer/circuit-breaker.js';
import { BabelFailureRelay } from '../pipeline/failure-relay.js';
import { Idempotent } from './idempotent.interceptor.js';
import { checkPayloadSchema, type PayloadSchema } from '../../schema/payload-schema.js';
import { isUrnContract, type UrnContract } from '../../schema/urn-contract.js';
import { raiseStandardError, resolveOptions, type OptionsInput } from '../../options/option-table.js';
import {
  checkHandlerCombination,
  DEFAULT_PATTERN_DISCOVERY_MS,
  handlerOptionTable,
} from '../options/handler-options.js';
import type { BatchOptions, ResolvedBatchOptions } from '../../consumer/batch-collector.js';
import type { TopicPattern } from '../../pulsar/topic-pattern.js';
import type { PulsarConsumerOptions } from '../../pulsar/client-options.js';
import type { SubscriptionType } from '../../pulsar/client-types.js';
import type { RetriableRule } from '../options/retriable-rule.js';

/** The options of `@BabelHandler(urn, options)`. */
export type BabelHandlerOptions = OptionsInput<typeof handlerOptionTable>;

/** What @BabelHandler stores in the handler's extras, so the server can name both sides of a clash. */
export interface BabelHandlerExtras {
  handler: string;
  /** The controller class and method, for the failure relay. */
  owner?: Type<unknown>;
  method?: string | symbol;
  timeoutMs?: number;
  maxAttempts?: number;
  retryPolicy?: RetryPolicy;
  topic?: string;
  subscription?: string;
  connection?: string;
  schema?: PayloadSchema;
  consumerOptions?: PulsarConsumerOptions;
  isRetriable?: RetriableRule;
  batch?: ResolvedBatchOptions;
  topicsPattern?: TopicPattern;
  patternDiscoveryMs?: number;
  /** Its entry in the server's `handlers` option, by this key (`@BabelHandler(urn, { settingsKey })`). */
  settingsKey?: string;
  /** Runs in the server's inbox (true), or not even when it covers every handler (false). */
  inbox?: boolean;
  /** Its subscription's circuit breaker, resolved (the decorator or the `handlers` option). */
  circuitBreaker?: CircuitBreakerOptions;
  /** Its subscription's rate limit per instance (the decorator or the `handlers` option). */
  maxPerSecond?: number;
  /** Set only by the server's `handlers` option (run-time settings). */
  subscriptionType?: SubscriptionType;
  concurrency?: number;
  unknownUrn?: UnknownUrnStrategy;
  /** Per-key order (`@BabelHandler(urn, { ordering })` or the server's `handlers` option). */
  ordering?: Ordering;
  /** What a message failed for good does to its key (`@BabelHandler(urn, { onExhausted })` or `handlers`). */
  onExhausted?: OnExhausted;
}

const HANDLER_OPTION_KEYS = Object.keys(handlerOptionTable);

export type TypedHandlerDecorator<T> = <M extends (data: T, ...rest: never[]) => unknown>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a controller method as the handler of one BabelQueue URN. It registers through Nest's event
 * patterns, so guards, pipes, interceptors and exception filters apply; `@Payload()` is `envelope.data`
 * and `@Ctx()` is a `BabelContext`. Given a contract (defineUrn), the method's first parameter must accept
 * its payload type, and its schema is validated.
 */
export function BabelHandler(urn: string, options?: BabelHandlerOptions): MethodDecorator;
export function BabelHandler<T extends object>(
  contract: UrnContract<T>,
  options: BabelHandlerOptions & { batch: BatchOptions },
): TypedHandlerDecorator<T[]>;
export function BabelHandler<T extends object>(
  contract: UrnContract<T>,
  options?: BabelHandlerOptions,
): TypedHandlerDecorator<T>;
export function BabelHandler(
  urnOrContract: string | UrnContract<object>,
  options: BabelHandlerOptions = {},
): MethodDecorator {
  const urn = isUrnContract(urnOrContract) ? urnOrContract.urn : urnOrContract;
  const pattern = typeof urn === 'string' ? urn.trim() : '';
  if (pattern === '')
    throw new TypeError('@BabelHandler needs a non-blank URN, e.g. @BabelHandler("urn:babel:orders:created")');
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`@BabelHandler options must be an object, got ${String(options)}`);
  const unknown = Object.keys(options).filter((key) => !HANDLER_OPTION_KEYS.includes(key));
  if (unknown.length > 0) {
    throw new TypeError(
      `@BabelHandler option(s) ${unknown.join(', ')} unknown; allowed: ${HANDLER_OPTION_KEYS.join(', ')}`,
    );
  }
  const resolved = resolveOptions(handlerOptionTable, options, (key) => `@BabelHandler ${key}`, raiseStandardError);
  checkHandlerCombination(resolved, options);
  const { timeoutMs, maxAttempts, retryPolicy, topic, subscription, connection, consumerOptions } = resolved;
  const { circuitBreaker, maxPerSecond } = resolved;
  const { batch, topicsPattern, patternDiscoveryMs, isRetriable, settingsKey, inbox, ordering } = resolved;
  const { onExhausted } = resolved;
  const idempotent = options.idempotency ? Idempotent(options.idempotency) : undefined;
  const given = options.schema ?? (isUrnContract(urnOrContract) ? urnOrContract.schema : undefined);
  const schema = given === undefined ? undefined : checkPayloadSchema(given, `@BabelHandler('${pattern}') schema`);
  return (target, key, descriptor) => {
    const owner = typeof target === 'function' ? target.name : target.constructor.name;
    const extras = {
      ...options.extras,
      [BABEL_HANDLER_EXTRAS]: {
        handler: `${owner}.${String(key)}`,
        owner: (typeof target === 'function' ? target : target.constructor) as Type<unknown>,
        method: key,
        ...(timeoutMs !== undefined && { timeoutMs }),
        ...(maxAttempts !== undefined && { maxAttempts }),
        ...(retryPolicy !== undefined && { retryPolicy }),
        ...(topic !== undefined && { topic }),
        ...(subscription !== undefined && { subscription }),
        ...(connection !== undefined && { connection }),
        ...(settingsKey !== undefined && { settingsKey }),
        ...(schema !== undefined && { schema }),
        ...(consumerOptions !== undefined && { consumerOptions }),
        ...(isRetriable !== undefined && { isRetriable }),
        ...(batch !== undefined && { batch }),
        ...(inbox !== undefined && { inbox }),
        ...(circuitBreaker !== undefined && { circuitBreaker }),
        ...(maxPerSecond !== undefined && { maxPerSecond }),
        ...(ordering !== undefined && { ordering }),
        ...(onExhausted !== undefined && { onExhausted }),
        ...(topicsPattern !== undefined && {
          topicsPattern,
          patternDiscoveryMs: patternDiscoveryMs ?? DEFAULT_PATTERN_DISCOVERY_MS,
        }),
      } satisfies BabelHandlerExtras,
    };
    const register = EventPattern<string>(pattern, BABEL_TRANSPORT, extras) as MethodDecorator;
    register(target, key, descriptor);
    // Nest consults it for a failure of any layer; it hands the failure to the user's filters, else back to
    // the transport with its true cause (and without Nest's default filter logging it a second time).
    UseFilters(BabelFailureRelay)(target, key, descriptor);
    idempotent?.(target, key, descriptor);
  };
}
