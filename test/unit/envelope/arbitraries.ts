// Shared fast-check arbitraries for valid envelopes (not a test file).
import fc from 'fast-check';
import type { Envelope } from '../../../lib/envelope/index.js';

const CANONICAL = new Set(['job', 'trace_id', 'data', 'meta', 'attempts', 'dead_letter']);
const META_KEYS = new Set(['id', 'queue', 'lang', 'schema_version', 'created_at']);

/** Non-blank string (JS trim), any code units including lone surrogates. */
const nonBlank = fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== '');
const jsonValue = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });
const unknownKeys = (reserved: Set<string>): fc.Arbitrary<Record<string, unknown>> =>
  fc.dictionary(
    fc.string({ unit: 'binary', maxLength: 10 }).filter((k) => !reserved.has(k)),
    jsonValue,
    { maxKeys: 3 },
  );

export const envelopeArb: fc.Arbitrary<Envelope> = fc
  .record({
    job: nonBlank,
    trace_id: nonBlank,
    data: fc.dictionary(fc.string({ unit: 'binary', maxLength: 10 }), jsonValue, { maxKeys: 6 }),
    id: fc.string({ unit: 'binary', maxLength: 40 }),
    queue: fc.string({ maxLength: 20 }),
    lang: fc.constantFrom('node', 'php', 'go', 'python', 'java', 'dotnet', 'cobol', ''),
    created_at: fc.nat({ max: 2 ** 45 }),
    attempts: fc.integer({ min: -3, max: 2 ** 31 }),
    metaExtra: unknownKeys(META_KEYS),
    rootExtra: unknownKeys(CANONICAL),
    deadLetter: fc.option(
      fc.record({
        reason: fc.constantFrom('failed', 'unknown_urn', 'poison'),
        error: fc.option(fc.string({ unit: 'binary' }), { nil: null }),
        exception: fc.option(fc.string(), { nil: null }),
        failed_at: fc.nat(),
        original_queue: fc.string(),
        attempts: fc.nat(),
        lang: fc.constant('node'),
      }),
      { nil: undefined },
    ),
  })
  .map((r) => {
    const env: Envelope = {
      job: r.job,
      trace_id: r.trace_id,
      data: r.data,
      meta: { id: r.id, queue: r.queue, lang: r.lang, schema_version: 1, created_at: r.created_at, ...r.metaExtra },
      attempts: r.attempts,
      ...r.rootExtra,
    };
    if (r.deadLetter !== undefined) env.dead_letter = r.deadLetter as Envelope['dead_letter'];
    return env;
  });
