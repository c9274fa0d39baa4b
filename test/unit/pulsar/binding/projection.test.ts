// The projection of the envelope onto bq-* properties (docs/contract.md#properties).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EnvelopeCodec } from '../../../../lib/envelope/index.js';
import { BQ, pulsarProperties } from '../../../../lib/pulsar/binding.js';

const orderCreated = readFileSync(
  fileURLToPath(new URL('../../../conformance/vendor/fixtures/order-created.json', import.meta.url)),
);

describe('BQ', () => {
  it('names the properties with hyphens', () => {
    expect(BQ).toEqual({
      job: 'bq-job',
      traceId: 'bq-trace-id',
      messageId: 'bq-message-id',
      schemaVersion: 'bq-schema-version',
      sourceLang: 'bq-source-lang',
      attempts: 'bq-attempts',
      delay: 'bq-delay',
      replayBypass: 'bq-replay-bypass',
    });
  });
});

describe('pulsarProperties', () => {
  it('projects order-created.json to exactly the six golden properties (20)', () => {
    expect(pulsarProperties(EnvelopeCodec.decode(orderCreated).envelope)).toStrictEqual({
      'bq-job': 'urn:babel:orders:created',
      'bq-trace-id': '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
      'bq-message-id': 'f1e2d3c4-b5a6-4789-90ab-cdef01234567',
      'bq-schema-version': '1',
      'bq-source-lang': 'php',
      'bq-attempts': '0',
    });
  });

  it('gives only strings, bq-attempts "0" on a fresh publish, lang "node" from make (21)', () => {
    const props = pulsarProperties(EnvelopeCodec.make('urn:a', { x: 1 }));
    for (const value of Object.values(props)) expect(typeof value).toBe('string');
    expect(props[BQ.attempts]).toBe('0');
    expect(props[BQ.sourceLang]).toBe('node');
    expect(Object.keys(props)).toHaveLength(6);
  });

  it('adds nothing else: no delay, bypass, created_at or unknown keys', () => {
    const env = { ...EnvelopeCodec.make('urn:a'), extra: 'x', dead_letter: { reason: 'failed' } };
    expect(Object.keys(pulsarProperties(env)).sort()).toEqual([
      'bq-attempts',
      'bq-job',
      'bq-message-id',
      'bq-schema-version',
      'bq-source-lang',
      'bq-trace-id',
    ]);
  });

  it('omits an empty job, trace_id, meta.id and meta.lang, but always has bq-attempts (22)', () => {
    const env = { job: '', trace_id: '', meta: { id: '', lang: '', schema_version: 1 }, attempts: 2, data: {} };
    expect(pulsarProperties(env)).toStrictEqual({ 'bq-schema-version': '1', 'bq-attempts': '2' });
  });

  it('omits non-string fields and meta-derived properties when meta is not an object', () => {
    expect(pulsarProperties({ job: 5, trace_id: null, meta: null })).toStrictEqual({ 'bq-attempts': '0' });
    expect(pulsarProperties({ meta: [] })).toStrictEqual({ 'bq-attempts': '0' });
    expect(pulsarProperties(null as unknown as Record<string, unknown>)).toStrictEqual({ 'bq-attempts': '0' });
  });

  it('writes bq-attempts "0" when attempts is missing or not an integer, and integers without exponent', () => {
    expect(pulsarProperties({})[BQ.attempts]).toBe('0');
    expect(pulsarProperties({ attempts: 1.5 })[BQ.attempts]).toBe('0');
    expect(pulsarProperties({ attempts: '3' })[BQ.attempts]).toBe('0');
    expect(pulsarProperties({ attempts: 7 })[BQ.attempts]).toBe('7');
    expect(pulsarProperties({ attempts: 1e21 })[BQ.attempts]).toBe('1000000000000000000000');
  });

  it('writes the schema version as found (a string as is, a number as decimal text); omits other types', () => {
    expect(pulsarProperties({ meta: { schema_version: 2 } })[BQ.schemaVersion]).toBe('2');
    expect(pulsarProperties({ meta: { schema_version: '1' } })[BQ.schemaVersion]).toBe('1');
    expect(pulsarProperties({ meta: {} })).not.toHaveProperty(BQ.schemaVersion);
    expect(pulsarProperties({ meta: { schema_version: null } })).not.toHaveProperty(BQ.schemaVersion);
  });

  it('keeps job and ids verbatim (no trimming: the projection mirrors the body)', () => {
    expect(pulsarProperties({ job: ' urn:a ', trace_id: 't ' })).toMatchObject({
      'bq-job': ' urn:a ',
      'bq-trace-id': 't ',
    });
  });

  it('the payload is encode(envelope) as UTF-8 and agrees with the properties (23)', () => {
    const env = EnvelopeCodec.make('urn:a', { s: 'é' }, { traceId: 'trace' });
    const payload = EnvelopeCodec.encodeToBuffer(env);
    const back = EnvelopeCodec.decode(payload).envelope;
    expect(pulsarProperties(back)).toStrictEqual(pulsarProperties(env));
  });
});
