import { checkPayloadSchema, type PayloadSchema } from './payload-schema.js';

const CONTRACT = Symbol.for('babelqueue.urn-contract');

/**
 * A URN and the shape of its `data`, declared once and shared by the producer and the consumer:
 * `publish(contract, data)` and `@BabelHandler(contract)` then only compile with a payload of type `T`, and the
 * schema, when given, is the one validated on both sides.
 */
export interface UrnContract<T extends object> {
  readonly urn: string;
  readonly schema?: PayloadSchema;
  /** Type-level only: the payload type (never set at run time). */
  readonly payloadType?: T;
  readonly [CONTRACT]: true;
}

/** The payload type of a contract. */
export type PayloadOf<C> = C extends UrnContract<infer T> ? T : never;

/** Declares a typed URN: `const OrderCreated = defineUrn<{ order_id: number }>('urn:babel:orders:created', { schema })`. */
export function defineUrn<T extends object>(urn: string, options: { schema?: PayloadSchema } = {}): UrnContract<T> {
  if (typeof urn !== 'string' || urn.trim() === '') {
    throw new TypeError(`defineUrn needs a non-blank URN, got ${JSON.stringify(urn) ?? String(urn)}`);
  }
  const schema = options.schema === undefined ? undefined : checkPayloadSchema(options.schema, `the schema of ${urn}`);
  return Object.freeze({ urn: urn.trim(), ...(schema !== undefined && { schema }), [CONTRACT]: true as const });
}

export function isUrnContract(value: unknown): value is UrnContract<object> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONTRACT] === true;
}
