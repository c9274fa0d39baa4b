// The envelope trace_id -> OTel trace id mapping (the other SDKs' rule) and the W3C traceparent parser.
import { createHash } from 'node:crypto';
import {
  formatTraceParent,
  otelTraceIdOf,
  parentSpanIdOf,
  parseTraceParent,
  uuidOfOtelTraceId,
} from '../../../lib/otel/trace-id.js';

const sha16 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);

describe('otelTraceIdOf', () => {
  it('maps a UUID byte for byte (dashes removed, lowercased)', () => {
    expect(otelTraceIdOf('4BF92F35-77B3-4DA6-A3CE-929D0E0E4736')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(otelTraceIdOf('4bf92f3577b34da6a3ce929d0e0e4736')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('hashes anything else: first 16 bytes of SHA-256', () => {
    expect(otelTraceIdOf('t')).toBe(sha16('t'));
    expect(otelTraceIdOf('order-42')).toBe(sha16('order-42'));
    expect(otelTraceIdOf('zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz')).toBe(sha16('zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'));
  });

  it('hashes the all-zero UUID (OTel calls that trace id invalid)', () => {
    const zero = '00000000-0000-0000-0000-000000000000';
    expect(otelTraceIdOf(zero)).toBe(sha16(zero));
  });

  it('round-trips with uuidOfOtelTraceId', () => {
    const uuid = '0af76519-16cd-43dd-8448-eb211c80319c';
    expect(uuidOfOtelTraceId(otelTraceIdOf(uuid))).toBe(uuid);
  });

  it('derives a deterministic parent span id', () => {
    expect(parentSpanIdOf('t')).toMatch(/^[0-9a-f]{16}$/);
    expect(parentSpanIdOf('t')).toBe(createHash('sha256').update('babelqueue-span:t').digest('hex').slice(0, 16));
  });
});

describe('parseTraceParent', () => {
  const valid = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('parses a valid header and formats it back', () => {
    const parsed = parseTraceParent(valid);
    expect(parsed).toEqual({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
    });
    expect(formatTraceParent(parsed!)).toBe(valid);
  });

  it.each([
    ['version ff', 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
    ['zero trace id', '00-00000000000000000000000000000000-b7ad6b7169203331-01'],
    ['zero span id', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01'],
    ['trailing part on version 00', `${valid}-extra`],
    ['upper case', valid.toUpperCase()],
    ['short', '00-0af7651916cd43dd-b7ad6b7169203331-01'],
    ['blank', ''],
  ])('ignores a malformed header (%s)', (_name, header) => {
    expect(parseTraceParent(header)).toBeUndefined();
  });

  it('accepts trailing parts on a later version', () => {
    expect(parseTraceParent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-more')).toBeDefined();
  });
});
