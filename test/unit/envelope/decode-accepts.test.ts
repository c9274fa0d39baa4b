// The envelope rules (docs/contract.md#the-envelope): decode never throws, accepts() checks every rule in order.
import { EnvelopeCodec } from '../../../lib/envelope/index.js';

const valid = (): Record<string, unknown> => ({
  job: 'urn:babel:orders:created',
  trace_id: 't',
  data: { order_id: 1042 },
  meta: { id: 'i', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1 },
  attempts: 0,
});
const text = (over: Record<string, unknown> = {}, drop: string[] = []): string => {
  const env: Record<string, unknown> = { ...valid(), ...over };
  for (const key of drop) delete env[key];
  return JSON.stringify(env);
};
const decodeAccepts = (input: string | Buffer): boolean => EnvelopeCodec.accepts(EnvelopeCodec.decode(input).envelope);

describe('EnvelopeCodec.decode', () => {
  it('decodes bytes, Uint8Array and strings alike', () => {
    const json = text();
    const bytes = Buffer.from(json);
    for (const input of [json, bytes, new Uint8Array(bytes)]) {
      const result = EnvelopeCodec.decode(input);
      expect(result).toEqual({ envelope: valid(), error: null, warnings: [] });
    }
  });

  it('decodes a Uint8Array that is a view into a larger buffer', () => {
    const padded = Buffer.from(`xx${text()}yy`);
    const view = new Uint8Array(padded.buffer, padded.byteOffset + 2, padded.length - 4);
    expect(EnvelopeCodec.decode(view).error).toBeNull();
  });

  it.each([
    ['malformed JSON', '{"job":', /^payload is not valid JSON: /],
    ['trailing garbage', `${text()} x`, /^payload is not valid JSON: .*after the JSON value/],
    ['an array', '[1,2]', /^payload is a JSON array, not an object$/],
    ['a number', '42', /^payload is a JSON number, not an object$/],
    ['a string', '"s"', /^payload is a JSON string, not an object$/],
    ['null', 'null', /^payload is JSON null, not an object$/],
    ['a boolean', 'true', /^payload is a JSON boolean, not an object$/],
    ['empty input', '', /^payload is not valid JSON: unexpected end of input$/],
    ['whitespace only', ' \n', /^payload is not valid JSON: /],
  ])('yields {} and a reason for %s, which accepts() rejects (9)', (_what, input, reason) => {
    const result = EnvelopeCodec.decode(input);
    expect(result.envelope).toEqual({});
    expect(result.error).toMatch(reason);
    expect(EnvelopeCodec.accepts(result.envelope)).toBe(false);
    expect(EnvelopeCodec.decode(Buffer.from(input)).error).toBe(result.error);
  });

  it('never throws, even on input that is not bytes or a string', () => {
    for (const input of [undefined, null, 5, {}, []]) {
      const result = EnvelopeCodec.decode(input as unknown as string);
      expect(result.envelope).toEqual({});
      expect(result.error).toMatch(/^payload must be bytes or a string/);
    }
  });

  it('survives a throwing onWarning hook', () => {
    const result = EnvelopeCodec.decode(text({ timestamp: 1 }), {
      onWarning: () => {
        throw new Error('logger down');
      },
    });
    expect(result.error).toBeNull();
    expect(result.warnings).toEqual(["dropped forbidden envelope key '/timestamp'"]);
  });

  it('accepts whitespace around the value (RFC 8259)', () => {
    expect(EnvelopeCodec.decode(` \t\r\n${text()}\n`).error).toBeNull();
  });
});

describe('the urn alias', () => {
  it('an urn-only envelope is accepted and resolves to its URN (10)', () => {
    const result = EnvelopeCodec.decode(text({ urn: 'urn:babel:orders:created' }, ['job']));
    expect(EnvelopeCodec.accepts(result.envelope)).toBe(true);
    expect(EnvelopeCodec.urn(result.envelope)).toBe('urn:babel:orders:created');
    expect(result.envelope.job).toBe('urn:babel:orders:created');
    expect('urn' in result.envelope).toBe(false);
    expect(EnvelopeCodec.encode(result.envelope)).not.toContain('"urn"');
  });

  it.each([[''], [null], ['   ']])('fills job %j from urn', (job) => {
    const env = EnvelopeCodec.decode(text({ job, urn: 'urn:x' })).envelope;
    expect(env.job).toBe('urn:x');
    expect(EnvelopeCodec.accepts(env)).toBe(true);
  });

  it('keeps both keys when job is set (urn is then an ordinary unknown key)', () => {
    const env = EnvelopeCodec.decode(text({ urn: 'urn:other' })).envelope;
    expect(env.job).toBe('urn:babel:orders:created');
    expect(env.urn).toBe('urn:other');
    expect(EnvelopeCodec.urn(env)).toBe('urn:babel:orders:created');
  });

  it('urn() trims, prefers job and returns "" when there is none', () => {
    expect(EnvelopeCodec.urn({ job: '  urn:a ' })).toBe('urn:a');
    expect(EnvelopeCodec.urn({ urn: ' urn:b' })).toBe('urn:b');
    expect(EnvelopeCodec.urn({ job: '', urn: 'urn:b' })).toBe('urn:b');
    expect(EnvelopeCodec.urn({ job: 5, urn: 'urn:b' })).toBe(''); // a non-string job names nothing
    expect(EnvelopeCodec.urn({ urn: 5 })).toBe('');
    expect(EnvelopeCodec.urn({})).toBe('');
    expect(EnvelopeCodec.urn(null)).toBe('');
    expect(EnvelopeCodec.urn('urn:a')).toBe('');
  });
});

describe('EnvelopeCodec.accepts / rejection', () => {
  it('accepts a valid envelope, negative attempts included (no core rejects them)', () => {
    expect(EnvelopeCodec.rejection(valid())).toBeNull();
    expect(EnvelopeCodec.accepts({ ...valid(), attempts: -1 })).toBe(true);
    expect(decodeAccepts(text({ attempts: -1 }))).toBe(true);
  });

  it('does not check meta.id, meta.queue, meta.lang, meta.created_at or dead_letter', () => {
    const env = { ...valid(), meta: { schema_version: 1 }, dead_letter: 'nonsense' };
    expect(EnvelopeCodec.accepts(env)).toBe(true);
  });

  const cases: Array<[string, Record<string, unknown>, string[], RegExp]> = [
    // 11: the URN
    ['missing job and urn', {}, ['job'], /no URN/],
    ['whitespace job', { job: '  \t' }, [], /no URN/],
    ['empty job', { job: '' }, [], /no URN/],
    ['non-string job', { job: 42 }, [], /no URN/],
    ['non-string urn alias', { urn: 42 }, ['job'], /no URN/],
    // 12: meta and schema_version
    [
      'schema_version 2',
      { meta: { ...(valid().meta as object), schema_version: 2 } },
      [],
      /'meta.schema_version' must be the number 1, got number 2/,
    ],
    ['schema_version 0', { meta: { ...(valid().meta as object), schema_version: 0 } }, [], /schema_version/],
    ['schema_version "1"', { meta: { ...(valid().meta as object), schema_version: '1' } }, [], /got "1"/],
    ['schema_version missing', { meta: { id: 'i' } }, [], /got nothing \(missing\)/],
    ['meta missing', {}, ['meta'], /'meta' must be an object/],
    ['meta null', { meta: null }, [], /'meta' must be an object, got null/],
    ['meta an array', { meta: [] }, [], /'meta' must be an object, got an array/],
    ['meta a string', { meta: 'm' }, [], /'meta' must be an object/],
    // 13: data
    ['data missing', {}, ['data'], /'data' must be an object/],
    ['data null', { data: null }, [], /'data' must be an object, got null/],
    ['data an array', { data: [1] }, [], /'data' must be an object, got an array/],
    ['data a string', { data: 'x' }, [], /'data' must be an object/],
    // 14: attempts
    ['attempts 1.5', { attempts: 1.5 }, [], /'attempts' must be an integer, got number 1.5/],
    ['attempts "0"', { attempts: '0' }, [], /'attempts' must be an integer, got "0"/],
    ['attempts missing', {}, ['attempts'], /'attempts' must be an integer/],
    ['attempts true', { attempts: true }, [], /'attempts' must be an integer/],
    ['attempts null', { attempts: null }, [], /'attempts' must be an integer/],
    // 15: trace_id
    ['trace_id missing', {}, ['trace_id'], /'trace_id' must be a non-blank string/],
    ['trace_id ""', { trace_id: '' }, [], /'trace_id'/],
    ['trace_id "  "', { trace_id: '  ' }, [], /'trace_id'/],
    ['trace_id a number', { trace_id: 7 }, [], /'trace_id'/],
  ];

  it.each(cases)('rejects %s (11–15)', (_what, over, drop, reason) => {
    const env = JSON.parse(text(over, drop)) as Record<string, unknown>;
    expect(EnvelopeCodec.accepts(env)).toBe(false);
    expect(EnvelopeCodec.rejection(env)).toMatch(reason);
    expect(decodeAccepts(text(over, drop))).toBe(false);
  });

  it('reports the first failing rule in the core order (URN, meta, data, attempts, trace_id)', () => {
    expect(EnvelopeCodec.rejection({})).toMatch(/no URN/);
    expect(EnvelopeCodec.rejection({ job: 'j' })).toMatch(/'meta'/);
    expect(EnvelopeCodec.rejection({ job: 'j', meta: { schema_version: 1 } })).toMatch(/'data'/);
    expect(EnvelopeCodec.rejection({ job: 'j', meta: { schema_version: 1 }, data: {} })).toMatch(/'attempts'/);
    expect(EnvelopeCodec.rejection({ job: 'j', meta: { schema_version: 1 }, data: {}, attempts: 0 })).toMatch(
      /'trace_id'/,
    );
  });

  it.each([[null], [undefined], [[]], ['x'], [1]])('rejects the non-object %j', (value) => {
    expect(EnvelopeCodec.accepts(value)).toBe(false);
    expect(EnvelopeCodec.rejection(value)).toMatch(/must be an object/);
  });

  it('accepts schema_version written as 1.0 or 1e0 (the same JSON number)', () => {
    expect(decodeAccepts(text().replace('"schema_version":1', '"schema_version":1.0'))).toBe(true);
    expect(decodeAccepts(text().replace('"schema_version":1', '"schema_version":1e0'))).toBe(true);
  });

  it('rejects attempts 1e400 (Infinity is not an integer)', () => {
    expect(decodeAccepts(text().replace('"attempts":0', '"attempts":1e400'))).toBe(false);
  });
});
