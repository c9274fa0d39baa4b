import { UseFilters, type Type } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { BABEL_HANDLER_EXTRAS, BABEL_TRANSPORT } from './constants.js';
import { checkRetryPolicy, type RetryPolicy } from '../consumer/index.js';
import { BabelFailureRelay } from './failure-relay.js';
import { Idempotent } from '../idempotency/idempotent.interceptor.js';
import type { IdempotencyOptions } from '../idempotency/store.js';
import { parseTopic } from '../pulsar/websocket/topic.js';
import { checkPayloadSchema, type PayloadSchema } from '../schema/payload-schema.js';
import { isUrnContract, type UrnContract } from '../schema/urn-contract.js';
import { checkRetriableRule, type RetriableRule } from './retriable-rule.js';

export interface BabelHandlerOptions {
  /** Free-form metadata kept with the handler (Nest "extras"), e.g. for documentation tooling. */
  extras?: Record<string, unknown>;
  /** This handler's time-out, ms, instead of the server's `handlerTimeoutMs`; 0 = no limit. */
  timeoutMs?: number;
  /** Total deliveries of this URN's messages, the first included, instead of the server's `maxAttempts`. */
  maxAttempts?: number;
  /** Spacing of this URN's retries instead of the server's `retryPolicy` (see the README's Retry policy). */
  retryPolicy?: RetryPolicy;
  /** Skip a message whose `meta.id` this handler already handled (see @Idempotent). */
  idempotency?: IdempotencyOptions;
  /**
   * The topic this handler consumes instead of the server's topics (short `payments` or full name). The server
   * subscribes each distinct topic and subscription once and routes within it.
   */
  topic?: string;
  /** The subscription this handler consumes through instead of the server's `subscription`. */
  subscription?: string;
  /** The named registration (`BabelQueueModule.forRoot({ name })`) whose server runs this handler; default: the unnamed one. */
  connection?: string;
  /**
   * JSON Schema of `data` (docs/schemas.md): a message that breaks it is dead-lettered at once with every
   * violation; `x-gdpr-sensitive` fields are decrypted first. Default: the contract's schema, if any.
   */
  schema?: PayloadSchema;
  /**
   * Which failures of this handler are worth a retry: `true` retries, `false` dead-letters at once, `undefined`
   * leaves it to the module's `isRetriable`, then to the built-in rule (docs/pulsar-features.md#your-own-retriable-rule).
   */
  isRetriable?: RetriableRule;
}

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
  isRetriable?: RetriableRule;
}

const HANDLER_OPTION_KEYS = [
  'extras',
  'timeoutMs',
  'maxAttempts',
  'retryPolicy',
  'idempotency',
  'topic',
  'subscription',
  'connection',
  'schema',
  'isRetriable',
] as const satisfies ReadonlyArray<keyof BabelHandlerOptions>;

function optionalName(value: unknown, option: string, example: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new TypeError(`@BabelHandler ${option} must be a non-blank string such as ${example}, got ${String(value)}`);
  return value.trim();
}

function optionalTopic(value: unknown): string | undefined {
  const topic = optionalName(value, 'topic', '"payments"');
  if (topic === undefined) return undefined;
  try {
    parseTopic(topic);
  } catch (error) {
    throw new TypeError(`@BabelHandler topic: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return topic;
}

/** A decorator that only fits a method whose first parameter accepts the contract's payload type. */
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
  const unknown = Object.keys(options).filter((key) => !(HANDLER_OPTION_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) {
    throw new TypeError(
      `@BabelHandler option(s) ${unknown.join(', ')} unknown; allowed: ${HANDLER_OPTION_KEYS.join(', ')}`,
    );
  }
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs >= 0)) {
    throw new TypeError(
      `@BabelHandler timeoutMs must be a whole number of ms (0 = no limit), got ${String(timeoutMs)}`,
    );
  }
  const { maxAttempts } = options;
  if (maxAttempts !== undefined && !(Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
    throw new RangeError(`@BabelHandler maxAttempts must be an integer >= 1, got ${String(maxAttempts)}`);
  }
  const retryPolicy = checkRetryPolicy(options.retryPolicy, '@BabelHandler retryPolicy');
  const topic = optionalTopic(options.topic);
  const subscription = optionalName(options.subscription, 'subscription', '"billing"');
  const connection = optionalName(options.connection, 'connection', '"payments"');
  const isRetriable = checkRetriableRule(options.isRetriable, '@BabelHandler isRetriable');
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
        ...(schema !== undefined && { schema }),
        ...(isRetriable !== undefined && { isRetriable }),
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
