// The bq-schema-version gate (docs/contract.md#the-schema-version-gate), read before the body.
import { EnvelopeCodec, SchemaVersionRejectedError } from '../../../../lib/envelope/index.js';
import { isBlankProperty, schemaVersionGate } from '../../../../lib/pulsar/binding.js';

describe('isBlankProperty', () => {
  it.each([[undefined], [''], [' '], ['\t'], ['\n'], ['\v'], ['\f'], ['\r'], [' \t\n\v\f\r ']])(
    '%j is blank',
    (value) => {
      expect(isBlankProperty(value)).toBe(true);
    },
  );

  it.each([
    ['\u00a0'],
    ['\u0085'],
    ['\u3000'],
    ['\ufeff'],
    ['\u2028'],
    ['\u1680'],
    ['\u200b'],
    ['x'],
    [' 1 '],
    ['\u001c'],
  ])('%j is not blank (only [ \\t\\n\\v\\f\\r] count)', (value) => {
    expect(isBlankProperty(value)).toBe(false);
  });
});

describe('schemaVersionGate', () => {
  it.each([[undefined], ['1'], [''], [' \t'], [' '], ['\n\u000b\f\r']])('%j → decode (31, 32)', (value) => {
    expect(schemaVersionGate(value)).toBe('decode');
  });

  it.each([['2'], ['01'], ['x'], [' 1'], ['1 '], ['\t1\n'], ['1.0'], ['+1'], ['1\u0000']])(
    '%j → reject, never trimmed (32)',
    (value) => {
      expect(schemaVersionGate(value)).toBe('reject');
    },
  );

  it.each([['\u00a0'], ['\u0085'], ['\u3000'], ['\ufeff'], ['\u00a01'], ['1\u3000']])(
    '%j → reject: not blank (33)',
    (value) => {
      expect(schemaVersionGate(value)).toBe('reject');
    },
  );

  it('a "1" property does not bypass the body check: schema_version 2 in the body is still rejected (36)', () => {
    const body = '{"job":"urn:a","trace_id":"t","data":{},"meta":{"schema_version":2},"attempts":0}';
    expect(schemaVersionGate('1')).toBe('decode');
    const { envelope } = EnvelopeCodec.decode(body);
    expect(EnvelopeCodec.accepts(envelope)).toBe(false);
    expect(EnvelopeCodec.rejection(envelope)).toMatch(/schema_version/);
  });

  it('a rejection is reported with the received value, whitespace visible', () => {
    expect(new SchemaVersionRejectedError(' 1').message).toMatch(/^bq-schema-version " 1" /);
  });
});
