import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import { InvalidPayloadError, BabelNonRetriableError } from '../../../lib/index.js';
import { payloadViolations } from '../../../lib/schema/index.js';
import { assertPayload, checkPayloadSchema } from '../../../lib/schema/payload-schema.js';
import { handlerPayload, publishPayload } from '../../../lib/schema/message-payload.js';

const schema = {
  type: 'object',
  required: ['order_id', 'currency'],
  properties: {
    order_id: { type: 'integer', minimum: 1 },
    currency: { enum: ['USD', 'EUR'] },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string', minLength: 2 } } } },
  },
  additionalProperties: false,
};

test('every violation is listed, each as <path>: <reason>', () => {
  expect(payloadViolations(schema, { order_id: 0, extra: 1, lines: [{ sku: '😀' }] })).toEqual([
    'currency: is required',
    'extra: is not allowed',
    'order_id: must be >= 1',
    'lines.0.sku: must NOT have fewer than 2 characters',
  ]);
  expect(payloadViolations({ type: 'object' }, [])).toEqual(['<root>: must be object']);
  expect(payloadViolations(schema, { order_id: 1, currency: 'GBP' })).toEqual([
    'currency: must be one of ["USD","EUR"]',
  ]);
  expect(payloadViolations(schema, { order_id: 1, currency: 'USD' })).toEqual([]);
});

test('InvalidPayloadError is not retriable and names the URN and every violation', () => {
  const error = (() => {
    try {
      assertPayload('urn:babel:orders:created', schema, { order_id: 'x' });
    } catch (caught) {
      return caught as InvalidPayloadError;
    }
    throw new Error('no error');
  })();
  expect(error).toBeInstanceOf(BabelNonRetriableError);
  expect(error.urn).toBe('urn:babel:orders:created');
  expect(error.violations).toEqual(['currency: is required', 'order_id: must be integer']);
  expect(error.message).toBe(
    'data of urn:babel:orders:created does not match its schema: currency: is required; order_id: must be integer',
  );
});

test('unknown keywords (x-gdpr-sensitive) are ignored; a broken schema fails when it is declared', () => {
  expect(payloadViolations({ type: 'string', 'x-gdpr-sensitive': 'contact' }, 'a')).toEqual([]);
  expect(() => checkPayloadSchema({ type: 'no-such-type' }, 'the schema')).toThrow(
    /the schema is not a valid JSON Schema/,
  );
  expect(() => checkPayloadSchema('nope', 'the schema')).toThrow(/must be a JSON Schema object/);
});

test('a large integer is validated without being rounded, and handlerPayload without a schema is the data itself', () => {
  const { envelope } = EnvelopeCodec.decode(
    '{"job":"u","trace_id":"t","data":{"n":12345678901234567890},"attempts":0,"meta":{"id":"i","schema_version":1}}',
  );
  const data = envelope.data as Record<string, unknown>;
  expect(handlerPayload('u', data, undefined, undefined)).toBe(data);
  expect(handlerPayload('u', data, { properties: { n: { type: 'integer' } } }, undefined)).toBe(data);
  expect(() => publishPayload('u', { n: 'x' }, { properties: { n: { type: 'integer' } } }, undefined)).toThrow(
    InvalidPayloadError,
  );
});
