// Routing on bq-job with the body as fallback (docs/contract.md#routing).
import { EnvelopeCodec } from '../../../../lib/envelope/index.js';
import { routingUrn } from '../../../../lib/pulsar/binding.js';

const body = (over: Record<string, unknown> = {}): Record<string, unknown> =>
  EnvelopeCodec.decode(
    JSON.stringify({
      job: 'urn:body',
      trace_id: 't',
      data: { from: 'body' },
      meta: { schema_version: 1 },
      attempts: 0,
      ...over,
    }),
  ).envelope;

describe('routingUrn', () => {
  it('routes on a non-blank bq-job (37)', () => {
    expect(routingUrn({ 'bq-job': 'urn:body' }, body())).toEqual({
      urn: 'urn:body',
      propertyUrn: 'urn:body',
      bodyUrn: 'urn:body',
      mismatch: false,
    });
  });

  it.each([[{}], [{ 'bq-job': '' }], [{ 'bq-job': ' \t\n\v\f\r' }]])(
    'falls back to the body when bq-job is absent or blank: %j (38)',
    (props) => {
      expect(routingUrn(props as Record<string, string>, body())).toEqual({
        urn: 'urn:body',
        propertyUrn: '',
        bodyUrn: 'urn:body',
        mismatch: false,
      });
    },
  );

  it('falls back to the body urn alias', () => {
    expect(routingUrn({}, body({ job: undefined, urn: ' urn:alias ' })).urn).toBe('urn:alias');
  });

  it('lets the property route when it differs from the body, and flags the mismatch (39)', () => {
    expect(routingUrn({ 'bq-job': 'urn:prop' }, body())).toEqual({
      urn: 'urn:prop',
      propertyUrn: 'urn:prop',
      bodyUrn: 'urn:body',
      mismatch: true,
    });
  });

  it('trims exactly [ \\t\\n\\v\\f\\r] from the property before comparing', () => {
    expect(routingUrn({ 'bq-job': ' \turn:body\r\n' }, body())).toMatchObject({ urn: 'urn:body', mismatch: false });
    const nbsp = routingUrn({ 'bq-job': '\u00a0urn:body' }, body());
    expect(nbsp).toMatchObject({ urn: '\u00a0urn:body', propertyUrn: '\u00a0urn:body', mismatch: true });
    expect(routingUrn({ 'bq-job': '\u00a0' }, body())).toMatchObject({ urn: '\u00a0', mismatch: true });
  });

  it('compares with the trimmed body URN', () => {
    expect(routingUrn({ 'bq-job': 'urn:body' }, body({ job: '  urn:body ' })).mismatch).toBe(false);
  });

  it('is case-sensitive', () => {
    expect(routingUrn({ 'bq-job': 'URN:BODY' }, body()).mismatch).toBe(true);
  });

  it('has no mismatch when the body has no URN; the property still routes (43 is decided by accepts)', () => {
    const env = body({ job: undefined });
    expect(routingUrn({ 'bq-job': 'urn:prop' }, env)).toEqual({
      urn: 'urn:prop',
      propertyUrn: 'urn:prop',
      bodyUrn: '',
      mismatch: false,
    });
    expect(EnvelopeCodec.accepts(env)).toBe(false);
  });

  it('a poison body stays poison even with bq-job set (42, 43)', () => {
    for (const payload of [Buffer.from([0x7b, 0xff, 0x7d]), Buffer.from('[1]'), Buffer.from('{"job":"urn:x"}')]) {
      const { envelope } = EnvelopeCodec.decode(payload);
      expect(routingUrn({ 'bq-job': 'urn:x' }, envelope).urn).toBe('urn:x');
      expect(EnvelopeCodec.accepts(envelope)).toBe(false);
    }
  });

  it('the handler data comes from the body, not from properties (41)', () => {
    const env = body();
    expect(routingUrn({ 'bq-job': 'urn:prop' }, env).urn).toBe('urn:prop');
    expect(env.data).toEqual({ from: 'body' });
  });

  it('gives "" when nothing names the message, and tolerates missing properties', () => {
    expect(routingUrn({}, {})).toEqual({ urn: '', propertyUrn: '', bodyUrn: '', mismatch: false });
    expect(routingUrn(undefined as unknown as Record<string, string>, body()).urn).toBe('urn:body');
  });

  it('is linear on a hostile whitespace run', () => {
    const hostile = `${' '.repeat(200_000)}x${' '.repeat(200_000)}y`;
    const started = Date.now();
    expect(routingUrn({ 'bq-job': hostile }, body()).propertyUrn).toBe(`x${' '.repeat(200_000)}y`);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
