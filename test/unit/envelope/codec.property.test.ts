// Property-based tests (fast-check): decode never throws, parse agrees with JSON.parse, encode is
// stable through decode, and number texts survive a retry exactly.
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import type { Envelope } from '../../../lib/envelope/index.js';
import { nativeParseIsExact, parseJson, parseJsonStrict, stringifyJson } from '../../../lib/envelope/json.js';
import { firstInvalidUtf8 } from '../../../lib/envelope/utf8.js';
import { envelopeArb } from './arbitraries.js';

const RUNS = { numRuns: 300 };

/** Characters that matter to the grammar, and look-alikes that must not. */
const JSON_CHARS = [...',:[]{}"\\/0123456789-+.eEtrufalsn \t\n\r', '\v', '\f', '\u00a0', '\ufeff', '\u2028', '\u0000'];
const edit = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 3 }),
  fc.array(fc.constantFrom(...JSON_CHARS), { maxLength: 3 }).map((chars) => chars.join('')),
);

/** JSON text with a random edit: near misses exercise the error paths. */
const nearJson = fc
  .tuple(fc.json({ stringUnit: 'binary' }), fc.nat(), fc.nat({ max: 3 }), edit)
  .map(([text, at, cut, insert]) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + insert + text.slice(i + cut);
  });

describe('decode never throws', () => {
  it('on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const result = EnvelopeCodec.decode(bytes);
        expect(typeof result.envelope).toBe('object');
        expect(result.error === null || typeof result.error === 'string').toBe(true);
        if (result.error !== null) expect(result.envelope).toEqual({});
      }),
      { numRuns: 1000 },
    );
  });

  it('on arbitrary strings and near-JSON text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), nearJson, fc.json()), (text) => {
        const result = EnvelopeCodec.decode(text);
        expect(result.error === null || typeof result.error === 'string').toBe(true);
        EnvelopeCodec.accepts(result.envelope);
        EnvelopeCodec.rejection(result.envelope);
        EnvelopeCodec.urn(result.envelope);
      }),
      { numRuns: 1000 },
    );
  });

  it('on the UTF-8 bytes of near-JSON text, with a random byte flipped', () => {
    fc.assert(
      fc.property(nearJson, fc.nat(), fc.integer({ min: 0, max: 255 }), (text, at, byte) => {
        const bytes = Buffer.from(text, 'utf8');
        if (bytes.length > 0) bytes[at % bytes.length] = byte;
        const result = EnvelopeCodec.decode(bytes);
        if (!isUtf8(bytes)) expect(result.error).toMatch(/^payload is not valid UTF-8 \(byte \d+\)$/);
      }),
      RUNS,
    );
  });
});

describe('the parser agrees with JSON.parse', () => {
  it('on what it accepts, what it rejects and the values it builds', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json({ stringUnit: 'binary' }), nearJson, fc.string()), (text) => {
        let expected: { ok: true; value: unknown } | { ok: false };
        try {
          expected = { ok: true, value: JSON.parse(text) };
        } catch {
          expected = { ok: false };
        }
        const actual = parseJson(text);
        expect(actual.ok).toBe(expected.ok);
        if (actual.ok && expected.ok) expect(actual.value).toStrictEqual(expected.value);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('firstInvalidUtf8 agrees with the platform validator', () => {
  it('on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(firstInvalidUtf8(bytes) === -1).toBe(isUtf8(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it('on valid UTF-8 with one byte changed', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.nat(),
        fc.integer({ min: 0x80, max: 0xff }),
        (s, at, byte) => {
          const bytes = Buffer.from(s, 'utf8');
          bytes[at % bytes.length] = byte;
          const offset = firstInvalidUtf8(bytes);
          expect(offset === -1).toBe(isUtf8(bytes));
          if (offset >= 0) expect(isUtf8(bytes.subarray(0, offset))).toBe(true);
        },
      ),
      RUNS,
    );
  });
});

describe('encode is stable through decode', () => {
  it('encode(decode(encode(e))) is byte-identical to encode(e), and decode accepts it', () => {
    fc.assert(
      fc.property(envelopeArb, (env) => {
        const first = EnvelopeCodec.encode(env);
        const decoded = EnvelopeCodec.decode(Buffer.from(first, 'utf8'));
        expect(decoded.error).toBeNull();
        expect(decoded.warnings).toEqual([]);
        expect(EnvelopeCodec.accepts(decoded.envelope)).toBe(true);
        expect(EnvelopeCodec.encode(decoded.envelope)).toBe(first);
        expect(decoded.envelope).toStrictEqual(JSON.parse(first));
      }),
      RUNS,
    );
  });

  it('withAttempts changes only attempts', () => {
    fc.assert(
      fc.property(envelopeArb, fc.nat(), (env, attempts) => {
        const first = EnvelopeCodec.encode(env);
        const decoded = EnvelopeCodec.decode(first).envelope as Envelope;
        const retried = JSON.parse(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(decoded, attempts)));
        expect(retried).toStrictEqual({ ...JSON.parse(first), attempts });
      }),
      RUNS,
    );
  });
});

// ---- exact number texts ----------------------------------------------------------------------

const digits = (min: number, max: number): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));

/** Any RFC 8259 number token: leading zeros only as "0", optional fraction and exponent. */
const numberToken = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, 25)).map(([a, b]) => a + b),
    ),
    fc.option(
      digits(1, 40).map((d) => `.${d}`),
      { nil: '' },
    ),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 4)).map((p) => p.join('')),
      { nil: '' },
    ),
  )
  .map((parts) => parts.join(''));

const keyText = fc.string({ unit: 'binary', maxLength: 8 }).map((k) => JSON.stringify(k));

const { valueText } = fc.letrec<{ valueText: string; arrayText: string; objectText: string }>((tie) => ({
  valueText: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberToken,
    fc.string({ unit: 'binary', maxLength: 6 }).map((s) => JSON.stringify(s)),
    fc.constantFrom('true', 'false', 'null'),
    tie('arrayText'),
    tie('objectText'),
  ),
  arrayText: fc.array(tie('valueText'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  objectText: fc
    .uniqueArray(fc.tuple(keyText, tie('valueText')), { maxLength: 4, selector: ([k]) => k })
    .map((members) => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`),
}));

const dataText = fc
  .uniqueArray(fc.tuple(keyText, valueText), { maxLength: 5, selector: ([k]) => k })
  .map((members) => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`);

describe('the JSON.parse fast path', () => {
  it('gives the same values and the same re-encoded text as the JS parser', () => {
    fc.assert(
      fc.property(fc.oneof(dataText, valueText, fc.json({ stringUnit: 'binary' }), nearJson), (text) => {
        const fast = parseJson(text);
        const strict = parseJsonStrict(text);
        expect(fast.ok).toBe(strict.ok);
        if (fast.ok && strict.ok) {
          expect(fast.value).toStrictEqual(strict.value);
          expect(stringifyJson(fast.value)).toBe(stringifyJson(strict.value));
        } else {
          expect(fast).toEqual(strict); // same error message
        }
      }),
      { numRuns: 2000 },
    );
  });
});

/** Number tokens near the edges of String()'s formats: doubles written every which way. */
const anyToken = fc
  .oneof(
    numberToken,
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc
      .tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 1, max: 21 }))
      .map(([d, p]) => d.toPrecision(p)),
    fc
      .tuple(fc.double({ min: -1e-3, max: 1e-3, noNaN: true }), fc.integer({ min: 0, max: 20 }))
      .map(([d, f]) => d.toFixed(f)),
    fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -12, max: 24 })).map(([m, e]) => String(m * 10 ** e)),
  )
  .filter((t) => /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/.test(t));

describe('the fast-path scan is sound', () => {
  it('lets through only number tokens that String() reproduces', () => {
    fc.assert(
      fc.property(anyToken, fc.constantFrom('[', '{"a":', '[0, ', '{"a":\n\t'), (token, before) => {
        const text = `${before}${token}${before.startsWith('[') ? ']' : '}'}`;
        if (nativeParseIsExact(text)) expect(String(Number(token))).toBe(token);
      }),
      { numRuns: 20000 },
    );
  });

  it('lets the common canonical numbers through', () => {
    for (const token of [
      '0',
      '7',
      '-3',
      '1042',
      '0.5',
      '10.25',
      '-0.5',
      '99.99',
      '123456789012',
      '0.000001',
      '1749132727000',
    ]) {
      expect({ token, fast: nativeParseIsExact(`{"a":${token}}`) }).toEqual({ token, fast: true });
    }
  });
});

describe('the JSON.stringify fast path of encode', () => {
  it('writes what the shaped writer writes', () => {
    fc.assert(
      fc.property(envelopeArb, (env) => {
        // A forbidden root key forces the shaped JS writer; it is never written, so texts must match.
        expect(EnvelopeCodec.encode({ ...env, timestamp: 1 })).toBe(EnvelopeCodec.encode(env));
      }),
      RUNS,
    );
  });
});

describe('number texts survive a retry exactly', () => {
  it('decode → attempts+1 → encode changes nothing but attempts', () => {
    fc.assert(
      fc.property(dataText, valueText, numberToken, fc.nat({ max: 1000 }), (data, extra, metaNumber, attempts) => {
        const head = `{"job":"urn:a","trace_id":"t","data":${data},"meta":{"id":"i","queue":"q","lang":"go","schema_version":1,"created_at":1,"n":${metaNumber}},"attempts":`;
        const text = `${head}${attempts},"extra":${extra}}`;
        const decoded = EnvelopeCodec.decode(Buffer.from(text, 'utf8'));
        expect(decoded.error).toBeNull();
        expect(decoded.envelope).toStrictEqual(JSON.parse(text));
        const env = decoded.envelope as Envelope;
        expect(EnvelopeCodec.encode(env)).toBe(text);
        expect(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(env, attempts + 1))).toBe(
          `${head}${attempts + 1},"extra":${extra}}`,
        );
      }),
      RUNS,
    );
  });
});
