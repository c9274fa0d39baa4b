// Property-based tests (fast-check) for the Pulsar binding.
import fc from 'fast-check';
import { EnvelopeCodec } from '../../../../lib/envelope/index.js';
import {
  BQ,
  pulsarProperties,
  reconcileAttempts,
  routingUrn,
  schemaVersionGate,
} from '../../../../lib/pulsar/binding.js';
import { envelopeArb } from '../../envelope/arbitraries.js';

const SIX = [BQ.job, BQ.traceId, BQ.messageId, BQ.schemaVersion, BQ.sourceLang, BQ.attempts];
const ASCII_BLANK = /^[ \t\n\v\f\r]*$/;

describe('pulsarProperties always agrees with the body', () => {
  it('on arbitrary valid envelopes, before and after the wire', () => {
    fc.assert(
      fc.property(envelopeArb, (env) => {
        const props = pulsarProperties(env);
        for (const key of Object.keys(props)) expect(SIX).toContain(key);
        for (const value of Object.values(props)) expect(typeof value).toBe('string');
        const body = EnvelopeCodec.decode(EnvelopeCodec.encodeToBuffer(env)).envelope as typeof env;
        expect(pulsarProperties(body)).toStrictEqual(props);
        expect(props[BQ.job]).toBe(body.job);
        expect(props[BQ.traceId]).toBe(body.trace_id);
        expect(props[BQ.messageId]).toBe(body.meta.id === '' ? undefined : body.meta.id);
        expect(props[BQ.sourceLang]).toBe(body.meta.lang === '' ? undefined : body.meta.lang);
        expect(props[BQ.schemaVersion]).toBe('1');
        expect(props[BQ.attempts]).toBe(String(body.attempts));
      }),
      { numRuns: 300 },
    );
  });
});

describe('reconcileAttempts', () => {
  const property = fc.oneof(
    fc.nat().map(String),
    fc.bigInt({ min: 0n, max: 10n ** 12n }).map(String),
    fc.string({ maxLength: 12 }),
    fc.constantFrom('', '-1', '+1', ' 1', '1.0', '007', '2147483647', '2147483648'),
  );

  it('is max(property if ^[0-9]+$ and ≤ 2^31−1, else body; redelivery count)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 1e6 }),
        fc.option(property, { nil: undefined }),
        fc.nat({ max: 1e6 }),
        (body, prop, count) => {
          const result = reconcileAttempts({ bodyAttempts: body, attemptsProperty: prop, redeliveryCount: count });
          const usable = prop !== undefined && /^[0-9]+$/.test(prop) && BigInt(prop) <= 2147483647n;
          expect(result).toBe(Math.max(usable ? Number(prop) : body, count));
          expect(result).toBeGreaterThanOrEqual(count);
          expect(result).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('schemaVersionGate', () => {
  it('decodes exactly "1" and ASCII-blank values', () => {
    const value = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 4 }),
      fc
        .array(fc.constantFrom(' ', '\t', '\n', '\v', '\f', '\r', '1', '\u00a0', '\u3000', '\ufeff', '\u0085'), {
          maxLength: 4,
        })
        .map((a) => a.join('')),
    );
    fc.assert(
      fc.property(value, (v) => {
        expect(schemaVersionGate(v)).toBe(v === '1' || ASCII_BLANK.test(v) ? 'decode' : 'reject');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('routingUrn', () => {
  it('routes on the trimmed property when it is not blank, else on the body; mismatch iff both differ', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ maxLength: 8 }), { nil: undefined }), envelopeArb, (prop, env) => {
        const props: Record<string, string> = prop === undefined ? {} : { [BQ.job]: prop };
        const route = routingUrn(props, env);
        expect(route.bodyUrn).toBe(EnvelopeCodec.urn(env));
        expect(route.urn).toBe(route.propertyUrn !== '' ? route.propertyUrn : route.bodyUrn);
        if (prop === undefined || ASCII_BLANK.test(prop)) expect(route.propertyUrn).toBe('');
        else expect(route.propertyUrn).toBe(prop.replace(/^[ \t\n\v\f\r]+/, '').replace(/[ \t\n\v\f\r]+$/, ''));
        expect(route.mismatch).toBe(
          route.propertyUrn !== '' && route.bodyUrn !== '' && route.propertyUrn !== route.bodyUrn,
        );
      }),
      { numRuns: 500 },
    );
  });
});
