// make and encode (docs/contract.md#the-envelope).
import { BabelQueueError, EnvelopeCodec } from '../../../lib/envelope/index.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('EnvelopeCodec.make', () => {
  it('trims the URN (1)', () => {
    expect(EnvelopeCodec.make('  urn:babel:orders:created\t').job).toBe('urn:babel:orders:created');
  });

  it.each(['', '   ', '\t\n'])('throws a BabelQueueError on the blank URN %j (1)', (urn) => {
    expect(() => EnvelopeCodec.make(urn)).toThrow(BabelQueueError);
    expect(() => EnvelopeCodec.make(urn)).toThrow(/non-empty URN/);
  });

  it('throws on a non-string URN', () => {
    expect(() => EnvelopeCodec.make(42 as unknown as string)).toThrow(BabelQueueError);
  });

  it('mints trace_id and meta.id as distinct lowercase UUID v4 strings (2)', () => {
    const env = EnvelopeCodec.make('urn:a');
    expect(env.trace_id).toMatch(UUID_V4);
    expect(env.meta.id).toMatch(UUID_V4);
    expect(env.trace_id).not.toBe(env.meta.id);
    expect(EnvelopeCodec.make('urn:a').meta.id).not.toBe(env.meta.id);
  });

  it('reuses a non-blank trace id, trimmed (3)', () => {
    expect(EnvelopeCodec.make('urn:a', {}, { traceId: '  trace-1 ' }).trace_id).toBe('trace-1');
  });

  it.each(['', '   '])('mints a trace id for %j (3)', (traceId) => {
    expect(EnvelopeCodec.make('urn:a', {}, { traceId }).trace_id).toMatch(UUID_V4);
  });

  it('sets lang node, schema_version 1, integer ms created_at and attempts 0 (4)', () => {
    const before = Date.now();
    const env = EnvelopeCodec.make('urn:a', { x: 1 }, { queue: 'orders' });
    const after = Date.now();
    expect(env.meta).toMatchObject({ queue: 'orders', lang: 'node', schema_version: 1 });
    expect(Number.isInteger(env.meta.created_at)).toBe(true);
    expect(env.meta.created_at).toBeGreaterThanOrEqual(before);
    expect(env.meta.created_at).toBeLessThanOrEqual(after);
    expect(env.attempts).toBe(0);
    expect(Object.keys(env)).toEqual(['job', 'trace_id', 'data', 'meta', 'attempts']);
    expect(Object.keys(env.meta)).toEqual(['id', 'queue', 'lang', 'schema_version', 'created_at']);
  });

  it('defaults the queue to "default" (absent or blank)', () => {
    expect(EnvelopeCodec.make('urn:a').meta.queue).toBe('default');
    expect(EnvelopeCodec.make('urn:a', {}, { queue: ' ' }).meta.queue).toBe('default');
  });

  it('copies data shallowly', () => {
    const data = { a: 1, nested: { b: 2 } };
    const env = EnvelopeCodec.make('urn:a', data);
    expect(env.data).toEqual(data);
    expect(env.data).not.toBe(data);
    expect(env.data.nested).toBe(data.nested);
  });

  it('copies an own "__proto__" key of data as plain data, leaving prototypes alone', () => {
    const data = JSON.parse('{"__proto__":{"polluted":true},"constructor":1}') as Record<string, unknown>;
    const env = EnvelopeCodec.make('urn:a', data);
    expect(Object.getPrototypeOf(env.data)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(env.data, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(EnvelopeCodec.encode(env)).toContain('"data":{"__proto__":{"polluted":true},"constructor":1}');
  });

  it('treats absent data as {}', () => {
    expect(EnvelopeCodec.make('urn:a').data).toEqual({});
  });

  it.each([[[1, 2]], ['text'], [5]])('rejects non-object data %j', (data) => {
    expect(() => EnvelopeCodec.make('urn:a', data as unknown as Record<string, unknown>)).toThrow(BabelQueueError);
  });

  it('produces an envelope that accepts() takes', () => {
    expect(EnvelopeCodec.accepts(EnvelopeCodec.make('urn:a', { x: 1 }))).toBe(true);
  });
});

describe('EnvelopeCodec.encode', () => {
  const env = EnvelopeCodec.make('urn:babel:orders:created', { order_id: 1042 }, { queue: 'orders', traceId: 't-1' });

  it('starts with {"job": and writes canonical key order without whitespace (5)', () => {
    const text = EnvelopeCodec.encode(env);
    expect(text.startsWith('{"job":')).toBe(true);
    expect(text).toBe(
      `{"job":"urn:babel:orders:created","trace_id":"t-1","data":{"order_id":1042},"meta":{"id":"${env.meta.id}","queue":"orders","lang":"node","schema_version":1,"created_at":${env.meta.created_at}},"attempts":0}`,
    );
  });

  it('puts the canonical keys first whatever order the object has, unknown keys after (5)', () => {
    const shuffled = {
      extra: true,
      attempts: 2,
      meta: env.meta,
      dead_letter: { reason: 'failed' },
      data: {},
      trace_id: 't',
      job: 'j',
      more: [1],
    };
    const keys = Object.keys(JSON.parse(EnvelopeCodec.encode(shuffled)));
    expect(keys).toEqual(['job', 'trace_id', 'data', 'meta', 'attempts', 'dead_letter', 'extra', 'more']);
  });

  it('writes non-ASCII, /, <, > and & literally (6)', () => {
    const text = EnvelopeCodec.encode(EnvelopeCodec.make('urn:a', { s: 'Café — naïve ☕ A & B <x>/y 😀' }));
    expect(text).toContain('"s":"Café — naïve ☕ A & B <x>/y 😀"');
  });

  it('escapes only ", \\ and control characters', () => {
    const text = EnvelopeCodec.encode(EnvelopeCodec.make('urn:a', { s: 'q"b\\n\n\t\u0001\u007f\u2028' }));
    expect(text).toContain('"s":"q\\"b\\\\n\\n\\t\\u0001\u007f\u2028"');
  });

  it('omits dead_letter when absent (7)', () => {
    expect(EnvelopeCodec.encode(env)).not.toContain('dead_letter');
    expect(EnvelopeCodec.encode({ ...env, dead_letter: undefined })).not.toContain('dead_letter');
  });

  it('encodes empty data as {} (8)', () => {
    expect(EnvelopeCodec.encode(EnvelopeCodec.make('urn:a', {}))).toContain('"data":{}');
  });

  it('has no trailing newline and round-trips through JSON.parse', () => {
    const text = EnvelopeCodec.encode(env);
    expect(text.endsWith('}')).toBe(true);
    expect(JSON.parse(text)).toEqual(env);
  });

  it('encodeToBuffer is the UTF-8 bytes of encode()', () => {
    const e = EnvelopeCodec.make('urn:a', { s: 'é☕😀' });
    expect(EnvelopeCodec.encodeToBuffer(e).equals(Buffer.from(EnvelopeCodec.encode(e), 'utf8'))).toBe(true);
  });

  it('follows JSON.stringify for non-JSON values in data', () => {
    const data = {
      u: undefined,
      f: () => 1,
      d: new Date(0),
      arr: [undefined, () => 1],
      nan: NaN,
      inf: -Infinity,
      big: 12n ** 20n,
    };
    const text = EnvelopeCodec.encode(EnvelopeCodec.make('urn:a', data));
    expect(text).toContain(
      `"data":{"d":"1970-01-01T00:00:00.000Z","arr":[null,null],"nan":null,"inf":null,"big":${(12n ** 20n).toString()}}`,
    );
  });

  it('throws a BabelQueueError on a cycle and on a non-object envelope', () => {
    const data: Record<string, unknown> = {};
    data.self = data;
    expect(() => EnvelopeCodec.encode(EnvelopeCodec.make('urn:a', data))).toThrow(BabelQueueError);
    expect(() => EnvelopeCodec.encode([] as unknown as Record<string, unknown>)).toThrow(BabelQueueError);
    expect(() => EnvelopeCodec.encode(null as unknown as Record<string, unknown>)).toThrow(BabelQueueError);
  });

  it('writes a shared (non-cyclic) object twice', () => {
    const shared = { k: 1 };
    expect(EnvelopeCodec.encode(EnvelopeCodec.make('urn:a', { a: shared, b: shared }))).toContain(
      '"data":{"a":{"k":1},"b":{"k":1}}',
    );
  });
});
