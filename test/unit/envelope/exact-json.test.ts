// Lossless JSON: exact numbers (docs/contract.md#retries), prototype-safe keys, strings, duplicates, depth.
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import { MAX_DEPTH, parseJson, parseJsonStrict, stringifyJson } from '../../../lib/envelope/json.js';

const wrap = (data: string, extra = ''): string =>
  `{"job":"urn:a","trace_id":"t","data":${data},"meta":{"id":"i","queue":"q","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0${extra}}`;

/** decode → attempts + 1 → encode, as a retry does. */
const retried = (text: string): string => {
  const { envelope, error } = EnvelopeCodec.decode(Buffer.from(text));
  expect(error).toBeNull();
  if (!EnvelopeCodec.accepts(envelope)) throw new Error(String(EnvelopeCodec.rejection(envelope)));
  return EnvelopeCodec.encode(EnvelopeCodec.withAttempts(envelope, envelope.attempts + 1));
};

describe('exact numbers', () => {
  const numbers = [
    '12345678901234567890',
    '-12345678901234567890',
    '9007199254740993',
    '1.0',
    '0.1000000000000000055511151231257827',
    '-0',
    '-0.0',
    '1E+2',
    '1e2',
    '1e-7',
    '2.50',
    '1e400',
    '-1e400',
    '0.5',
    '100',
  ];

  it.each(numbers)('%s comes out exactly as it came in after a retry', (raw) => {
    const data = `{"n":${raw},"list":[${raw},1,${raw}],"deep":{"x":[{"y":${raw}}]}}`;
    expect(retried(wrap(data))).toBe(wrap(data).replace('"attempts":0', '"attempts":1'));
  });

  it('gives handlers plain JS numbers', () => {
    const env = EnvelopeCodec.decode(
      wrap('{"big":12345678901234567890,"one":1.0,"e":1E+2,"z":-0,"d":0.1000000000000000055511151231257827}'),
    ).envelope;
    expect(env.data).toEqual({ big: Number('12345678901234567890'), one: 1, e: 100, z: -0, d: 0.1 });
    expect(Object.is((env.data as { z: number }).z, -0)).toBe(true);
  });

  it('writes a number the handler changed fresh, and keeps the ones it did not touch', () => {
    const env = EnvelopeCodec.decode(wrap('{"a":1.0,"b":1.50,"list":[2.0,3.0]}')).envelope;
    const data = env.data as { a: number; b: number; list: number[] };
    data.a = 2;
    data.list[1] = 4;
    expect(EnvelopeCodec.encode(env)).toContain('"data":{"a":2,"b":1.50,"list":[2.0,4]}');
  });

  it('keeps exact unknown numbers at the root and in meta', () => {
    const text = wrap('{}', ',"extra":1.10,"big":99999999999999999999').replace(
      '"created_at":1749132727000',
      '"created_at":1749132727000,"v":3.0',
    );
    expect(retried(text)).toBe(text.replace('"attempts":0', '"attempts":1'));
  });

  it('writes attempts fresh when withAttempts replaces it', () => {
    const text = wrap('{}').replace('"attempts":0', '"attempts":2.0');
    const env = EnvelopeCodec.decode(text).envelope as never;
    expect(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(env, 2))).toContain('"attempts":2}');
    expect(EnvelopeCodec.encode(env)).toContain('"attempts":2.0}'); // the decoded one is untouched
  });

  it('the last of duplicate keys wins, and its own number text is used', () => {
    expect(EnvelopeCodec.encode(EnvelopeCodec.decode(wrap('{"a":1.0,"b":0,"a":1}')).envelope)).toContain(
      '"data":{"a":1,"b":0}',
    );
    expect(EnvelopeCodec.encode(EnvelopeCodec.decode(wrap('{"a":1,"a":1.0}')).envelope)).toContain('"data":{"a":1.0}');
    expect(EnvelopeCodec.encode(EnvelopeCodec.decode(wrap('{"a":1.0,"a":"x"}')).envelope)).toContain(
      '"data":{"a":"x"}',
    );
  });
});

describe('duplicate keys', () => {
  it('behave like JSON.parse: the last value wins at the first position', () => {
    const result = parseJson('{"a":1,"b":2,"a":3}');
    expect(result).toEqual({ ok: true, value: JSON.parse('{"a":1,"b":2,"a":3}') });
    if (result.ok) expect(Object.keys(result.value as object)).toEqual(['a', 'b']);
  });

  it('a duplicate "job" in the body: the last one routes', () => {
    const env = EnvelopeCodec.decode(wrap('{}').replace('"job":"urn:a"', '"job":"urn:a","job":"urn:b"')).envelope;
    expect(EnvelopeCodec.urn(env)).toBe('urn:b');
  });
});

describe('key order', () => {
  it('keeps received key order, array-index keys included', () => {
    const data = '{"b":1,"2":2,"a":3,"1":4,"01":5,"4294967295":6,"4294967294":7}';
    expect(retried(wrap(data))).toContain(`"data":${data}`);
  });

  it('adds keys a handler set after the received ones, and leaves deleted ones out', () => {
    const env = EnvelopeCodec.decode(wrap('{"b":1,"2":2,"a":3}')).envelope;
    const data = env.data as Record<string, unknown>;
    delete data.a;
    data['0'] = 'new';
    data.z = 'z';
    expect(EnvelopeCodec.encode(env)).toContain('"data":{"b":1,"2":2,"0":"new","z":"z"}');
  });
});

describe('prototype-named keys', () => {
  it('"__proto__", "constructor" and "prototype" in data and meta are plain own data', () => {
    const data =
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":1,"toString":2,"hasOwnProperty":3}';
    const text = wrap(data).replace(
      '"created_at":1749132727000',
      '"created_at":1749132727000,"__proto__":{"polluted":true},"constructor":"c"',
    );
    const env = EnvelopeCodec.decode(text).envelope;
    const d = env.data as Record<string, unknown>;
    const meta = env.meta as Record<string, unknown>;
    for (const obj of [d, meta]) {
      expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(obj, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(obj, '__proto__')?.value).toEqual({ polluted: true });
      expect((obj as { polluted?: unknown }).polluted).toBeUndefined();
    }
    expect(d.constructor).toEqual({ prototype: { polluted: true } });
    expect(d.toString).toBe(2);
    expect(meta.constructor).toBe('c');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(EnvelopeCodec.accepts(env)).toBe(true);
    expect(retried(text)).toBe(text.replace('"attempts":0', '"attempts":1'));
  });

  it('"__proto__" at the root survives withAttempts as data', () => {
    const text = wrap('{}', ',"__proto__":{"attempts":99}');
    const env = EnvelopeCodec.decode(text).envelope as never;
    const copy = EnvelopeCodec.withAttempts(env, 1);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(EnvelopeCodec.encode(copy)).toBe(text.replace('"attempts":0', '"attempts":1'));
  });

  it('still parses when Object.prototype members are non-writable (frozen intrinsics)', () => {
    const original = Object.getOwnPropertyDescriptor(Object.prototype, 'toString')!;
    Object.defineProperty(Object.prototype, 'toString', { ...original, writable: false });
    try {
      const result = parseJson('{"toString":1}');
      expect(result.ok && (result.value as { toString: unknown }).toString).toBe(1);
    } finally {
      Object.defineProperty(Object.prototype, 'toString', original);
    }
  });
});

describe('strings', () => {
  it('decodes every escape and re-emits the value with only the required escapes', () => {
    const env = EnvelopeCodec.decode(
      wrap('{"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u2603\\ud83d\\ude00"}'),
    ).envelope;
    expect((env.data as { s: string }).s).toBe('"\\/\b\f\n\r\tAé☃😀');
    expect(EnvelopeCodec.encode(env)).toContain('"data":{"s":"\\"\\\\/\\b\\f\\n\\r\\tAé☃😀"}');
  });

  it('keeps a lone surrogate escape (valid JSON grammar) and re-emits it escaped', () => {
    const env = EnvelopeCodec.decode(wrap('{"hi":"a\\uD800b","lo":"\\udc00","rev":"\\ude00\\ud83d"}')).envelope;
    expect(env.data).toEqual({ hi: 'a\ud800b', lo: '\udc00', rev: '\ude00\ud83d' });
    const out = EnvelopeCodec.encode(env);
    expect(out).toContain('"data":{"hi":"a\\ud800b","lo":"\\udc00","rev":"\\ude00\\ud83d"}');
    expect(Buffer.from(out, 'utf8').toString('utf8')).toBe(out); // stays well-formed UTF-8
  });

  it.each([
    ['a raw control character', '{"s":"a\nb"}', /unescaped control character U\+000A/],
    ['a raw NUL', '{"s":"\u0000"}', /unescaped control character U\+0000/],
    ['an unknown escape', '{"s":"\\x41"}', /invalid escape/],
    ['a short \\u escape', '{"s":"\\u12"}', /invalid \\u escape/],
    ['a non-hex \\u escape', '{"s":"\\u12g4"}', /invalid \\u escape/],
    ['a single-quoted string', "{'s':1}", /expected a string key/],
  ])('rejects %s', (_what, data, reason) => {
    const result = EnvelopeCodec.decode(wrap(data));
    expect(result.error).toMatch(/^payload is not valid JSON: /);
    expect(result.error).toMatch(reason);
  });
});

it('reports an unterminated string', () => {
  expect(EnvelopeCodec.decode('{"s":"abc').error).toBe(
    'payload is not valid JSON: unterminated string at end of input',
  );
  expect(EnvelopeCodec.decode('{"s":"a\\').error).toMatch(/^payload is not valid JSON: /);
});

describe('strict grammar (agrees with JSON.parse)', () => {
  it.each([
    '{"a":01}',
    '{"a":1.}',
    '{"a":.5}',
    '{"a":+1}',
    '{"a":1e}',
    '{"a":1e+}',
    '{"a":-}',
    '{"a":0x10}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":tru}',
    '{"a":nul}',
    '{"a":1,}',
    '[1,]',
    '{"a" 1}',
    '{,}',
    '{"a":1 "b":2}',
    '{"a":[1 2]}',
    '{a:1}',
    '{"a":1}}',
    '\u00a0{}',
    '{}\u00a0',
    '\u000b{}',
    '{"a":"\\u"}',
    '/*c*/{}',
  ])('rejects %j', (input) => {
    expect(() => JSON.parse(input)).toThrow(SyntaxError);
    expect(parseJson(input).ok).toBe(false);
    expect(EnvelopeCodec.decode(input).error).toMatch(/^payload is not valid JSON: /);
  });

  it.each([
    '{}',
    '[]',
    ' {"a" : [ 1 , { } , "x" ] } ',
    '0',
    '-0',
    '1E-2',
    'true',
    'false',
    'null',
    '"\\u0000"',
    '[[[]]]',
  ])('parses %j to what JSON.parse gives', (input) => {
    const result = parseJson(input);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value).toStrictEqual(JSON.parse(input));
  });
});

describe('both parse paths', () => {
  // The native fast path is taken only when a scan finds nothing the JS parser would record.
  it.each([
    ['an escaped array-index key', '{"b":1,"\\u0031":2}', '{"b":1,"1":2}'],
    ['a number after whitespace', '[ 1.0 ,\n\t-0 ,1e5]', '[1.0,-0,1e5]'],
    ['a 16-digit integer', '{"a":1234567890123456789}', '{"a":1234567890123456789}'],
    ['a number first in an array', ' [1.50]', '[1.50]'],
    ['number-like text inside strings only', '{"s":"a: 1.0, [2e3"}', '{"s":"a: 1.0, [2e3"}'],
  ])('keep %s exact', (_what, input, output) => {
    for (const parse of [parseJson, parseJsonStrict]) {
      const result = parse(input);
      expect(result.ok && stringifyJson(result.value)).toBe(output);
    }
  });

  it('agree on error messages', () => {
    expect(parseJson('{"a":1,}')).toEqual(parseJsonStrict('{"a":1,}'));
    expect(parseJson('{"a":1,}')).toEqual({ ok: false, error: expect.stringMatching(/expected a string key/) });
  });
});

describe('depth cap', () => {
  const nested = (depth: number, open = '[', close = ']'): string => open.repeat(depth) + close.repeat(depth);

  it(`parses ${MAX_DEPTH} levels`, () => {
    expect(parseJson(nested(MAX_DEPTH)).ok).toBe(true);
    expect(parseJsonStrict(nested(MAX_DEPTH)).ok).toBe(true);
    const objects = `${'{"a":'.repeat(MAX_DEPTH - 1)}{}${'}'.repeat(MAX_DEPTH - 1)}`;
    expect(parseJson(`${' '.repeat(5000)}${objects}`).ok).toBe(true);
    expect(parseJson(`{"a":${objects}}`).ok).toBe(false);
    expect(EnvelopeCodec.decode(wrap(`{"a":${nested(MAX_DEPTH - 2)}}`)).error).toBeNull();
  });

  it(`returns an error past ${MAX_DEPTH} levels instead of overflowing the stack`, () => {
    expect(parseJson(nested(MAX_DEPTH + 1))).toEqual({
      ok: false,
      error: expect.stringMatching(/nesting deeper than 512 levels/),
    });
    expect(parseJson(`{"a":${nested(MAX_DEPTH)}}`)).toEqual({
      ok: false,
      error: expect.stringMatching(/nesting deeper/),
    });
    const result = EnvelopeCodec.decode(wrap(`{"a":${nested(100_000)}}`));
    expect(result.error).toMatch(/^payload is not valid JSON: nesting deeper than 512 levels/);
    expect(EnvelopeCodec.decode('{"a":'.repeat(100_000)).error).toMatch(/nesting deeper/);
  });
});

describe('stringifyJson', () => {
  it('matches JSON.stringify for plain values', () => {
    const value = { a: [1, 'x', null, true, { b: -0 }], c: 'é"\\\n', d: 1.5e300, e: [] };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it('returns undefined where JSON.stringify writes nothing', () => {
    expect(stringifyJson(undefined)).toBeUndefined();
    expect(stringifyJson(() => 1)).toBeUndefined();
  });

  it('unwraps boxed primitives and calls toJSON', () => {
    expect(stringifyJson([Object(1), Object('s'), Object(false), { toJSON: () => 'j' }])).toBe('[1,"s",false,"j"]');
  });
});
