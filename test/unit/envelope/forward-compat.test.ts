// Behaviours 17–19: unknown keys survive a retry; forbidden keys are dropped with a warning.
import { EnvelopeCodec, FORBIDDEN_KEY_POINTERS } from '../../../lib/envelope/index.js';
import type { Envelope } from '../../../lib/envelope/index.js';

const base = {
  job: 'urn:babel:orders:created',
  trace_id: 't',
  data: { order_id: 1042 },
  meta: { id: 'i', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000 },
  attempts: 0,
};

const retry = (text: string): Record<string, unknown> => {
  const env = EnvelopeCodec.decode(text).envelope;
  if (!EnvelopeCodec.accepts(env)) throw new Error('not accepted');
  return JSON.parse(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(env, env.attempts + 1)));
};

describe('unknown keys (17, 18)', () => {
  it('survive decode → attempts+1 → encode at the root and in meta, with the same JSON types', () => {
    const unknown = {
      s: 'x',
      n: 1.5,
      b: false,
      z: null,
      arr: [1, { a: [] }],
      obj: { k: {} },
      empty_arr: [],
      empty_obj: {},
    };
    const env = { ...base, meta: { ...base.meta, ...unknown }, ...unknown };
    const out = retry(JSON.stringify(env));
    expect(out).toStrictEqual({ ...env, attempts: 1 });
  });

  it('an unknown meta.lang ("cobol") is accepted and re-emitted unchanged', () => {
    const out = retry(JSON.stringify({ ...base, meta: { ...base.meta, lang: 'cobol' } }));
    expect((out.meta as { lang: string }).lang).toBe('cobol');
  });

  it('"timestamp" or "job" inside meta, and "ts" at the root, are ordinary unknown keys', () => {
    const env = { ...base, ts: 1, meta: { ...base.meta, timestamp: 2, job: 'j' } };
    const result = EnvelopeCodec.decode(JSON.stringify(env));
    expect(result.warnings).toEqual([]);
    expect(retry(JSON.stringify(env))).toStrictEqual({ ...env, attempts: 1 });
  });

  it('an existing dead_letter block is carried unchanged', () => {
    const env = { ...base, dead_letter: { reason: 'failed', original_queue: 'orders', extra: [1] } };
    expect(retry(JSON.stringify(env)).dead_letter).toStrictEqual(env.dead_letter);
  });
});

describe('forbidden keys (19)', () => {
  it('lists the five pointers', () => {
    expect(FORBIDDEN_KEY_POINTERS).toEqual([
      '/timestamp',
      '/meta/max_retries',
      '/meta/attempts',
      '/meta/source',
      '/meta/ts',
    ]);
  });

  it('are dropped on decode with one warning per key naming its pointer; decode still succeeds', () => {
    const env = {
      ...base,
      timestamp: 1,
      meta: { ...base.meta, max_retries: 5, attempts: 3, source: 'laravel', ts: 9 },
    };
    const hooked: string[] = [];
    const result = EnvelopeCodec.decode(JSON.stringify(env), { onWarning: (m) => hooked.push(m) });
    const expected = FORBIDDEN_KEY_POINTERS.map((p) => `dropped forbidden envelope key '${p}'`);
    expect(result.error).toBeNull();
    expect(result.warnings).toEqual(expected);
    expect(hooked).toEqual(expected);
    expect(result.envelope).toStrictEqual(base);
    expect(EnvelopeCodec.accepts(result.envelope)).toBe(true);
  });

  it('are never written by encode, even when the caller put them there', () => {
    const env = {
      ...base,
      timestamp: 1,
      meta: { ...base.meta, max_retries: 5, attempts: 3, source: 's', ts: 9, kept: 1 },
    };
    const out = JSON.parse(EnvelopeCodec.encode(env));
    expect(out).toStrictEqual({ ...base, meta: { ...base.meta, kept: 1 } });
  });

  it('leave forbidden-looking keys elsewhere alone (data, dead_letter, nested objects)', () => {
    const data = { timestamp: 1, meta: { ts: 2 }, source: 's' };
    const env = { ...base, data, dead_letter: { ts: 3 } } as unknown as Envelope;
    expect(JSON.parse(EnvelopeCodec.encode(env))).toStrictEqual(env);
    expect(EnvelopeCodec.decode(JSON.stringify(env)).warnings).toEqual([]);
  });

  it('are not warned about when meta is not an object', () => {
    expect(EnvelopeCodec.decode(JSON.stringify({ ...base, meta: [{ ts: 1 }] })).warnings).toEqual([]);
  });
});

describe('EnvelopeCodec.withAttempts', () => {
  it('returns a copy with attempts replaced and everything else shared', () => {
    const env = EnvelopeCodec.make('urn:a', { x: 1 });
    const copy = EnvelopeCodec.withAttempts(env, 3);
    expect(copy).not.toBe(env);
    expect(copy.attempts).toBe(3);
    expect(env.attempts).toBe(0);
    expect(copy.data).toBe(env.data);
    expect(copy.meta).toBe(env.meta);
    expect(Object.keys(copy)).toEqual(Object.keys(env));
  });

  it.each([[1.5], [NaN], [Infinity], ['1']])('throws on the non-integer %p', (attempts) => {
    expect(() => EnvelopeCodec.withAttempts(EnvelopeCodec.make('urn:a'), attempts as number)).toThrow(
      /attempts must be an integer/,
    );
  });

  it('takes integers that accepts() lets through (negative, beyond 2^53) without throwing', () => {
    const env = EnvelopeCodec.make('urn:a');
    expect(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(env, -1))).toContain('"attempts":-1');
    expect(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(env, 2 ** 60))).toContain(`"attempts":${2 ** 60}`);
  });
});
