import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { BabelNonRetriableError } from '../envelope/index.js';

/** A JSON Schema (draft-07) for one URN's `data`. */
export type PayloadSchema = Record<string, unknown> | boolean;

/**
 * `data` does not match its URN's schema. Not retriable: the same data fails again, so the consumer dead-letters
 * it on the first delivery; the message (and the dead-letter record's `error`) lists every violation.
 */
export class InvalidPayloadError extends BabelNonRetriableError {
  readonly urn: string;
  /** Every violation, as `<path>: <reason>` (`<root>` for `data` itself). */
  readonly violations: readonly string[];

  constructor(urn: string, violations: readonly string[]) {
    super(`data of ${urn} does not match its schema: ${violations.join('; ')}`);
    this.name = 'InvalidPayloadError';
    this.urn = urn;
    this.violations = violations;
  }
}

/**
 * One validator for every schema: all errors (not the first), unknown keywords ignored (a schema may carry
 * `x-gdpr-sensitive` and other annotations), and string lengths in Unicode code points as the BabelQueue
 * contract requires ("😀" is one, not two).
 */
// (Ajv counts minLength / maxLength in code points by default.)
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new WeakMap<object, ValidateFunction>();
/** The two boolean schemas (`true` accepts anything, `false` nothing), compiled on first use. */
const booleanSchemas: { true?: ValidateFunction; false?: ValidateFunction } = {};

function validatorOf(schema: PayloadSchema): ValidateFunction {
  if (typeof schema === 'boolean') {
    const key = schema ? 'true' : 'false';
    return (booleanSchemas[key] ??= ajv.compile(schema));
  }
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Throws at start-up (not on the first message) when `schema` is not a usable JSON Schema. */
export function checkPayloadSchema(schema: unknown, where: string): PayloadSchema {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    throw new TypeError(`${where} must be a JSON Schema object, got ${JSON.stringify(schema) ?? String(schema)}`);
  }
  try {
    validatorOf(schema as PayloadSchema);
  } catch (error) {
    throw new TypeError(`${where} is not a valid JSON Schema: ${error instanceof Error ? error.message : error}`, {
      cause: error,
    });
  }
  return schema as PayloadSchema;
}

function describeError(error: ErrorObject): string {
  const base = error.instancePath === '' ? '<root>' : error.instancePath.slice(1).replaceAll('/', '.');
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return `${base === '<root>' ? '' : `${base}.`}${String(params.missingProperty)}: is required`;
  if (error.keyword === 'additionalProperties') {
    return `${base === '<root>' ? '' : `${base}.`}${String(params.additionalProperty)}: is not allowed`;
  }
  if (error.keyword === 'enum') return `${base}: must be one of ${JSON.stringify(params.allowedValues)}`;
  return `${base}: ${error.message ?? error.keyword}`;
}

/** Every way `data` breaks `schema`, as `<path>: <reason>`; empty when it matches. Pure. */
export function payloadViolations(schema: PayloadSchema, data: unknown): string[] {
  const validate = validatorOf(schema);
  if (validate(data)) return [];
  return (validate.errors ?? []).map(describeError);
}

/** Throws InvalidPayloadError, listing every violation, when `data` does not match `schema`. */
export function assertPayload(urn: string, schema: PayloadSchema | undefined, data: unknown): void {
  if (schema === undefined) return;
  const violations = payloadViolations(schema, data);
  if (violations.length > 0) throw new InvalidPayloadError(urn, violations);
}
