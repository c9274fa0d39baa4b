// Behaviour 42: the body is checked strictly as UTF-8 (Buffer.toString would hide bad bytes as U+FFFD).
import { isUtf8 } from 'node:buffer';
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import { firstInvalidUtf8 } from '../../../lib/envelope/utf8.js';

/** A valid envelope whose data.s holds the given bytes inside the string. */
const withBytes = (bytes: number[]): { buf: Buffer; at: number } => {
  const head = Buffer.from('{"job":"urn:a","trace_id":"t","data":{"s":"');
  const tail = Buffer.from('"},"meta":{"schema_version":1},"attempts":0}');
  return { buf: Buffer.concat([head, Buffer.from(bytes), tail]), at: head.length };
};

describe('strict UTF-8', () => {
  it.each([
    ['a lone continuation byte', [0x80]],
    ['a continuation byte after ASCII', [0x41, 0xbf]],
    ['overlong "/" (C0 AF)', [0xc0, 0xaf]],
    ['overlong NUL (C0 80)', [0xc0, 0x80]],
    ['overlong C1 lead', [0xc1, 0xbf]],
    ['overlong 3-byte (E0 80 AF)', [0xe0, 0x80, 0xaf]],
    ['overlong 4-byte (F0 80 80 AF)', [0xf0, 0x80, 0x80, 0xaf]],
    ['a CESU high surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
    ['a CESU low surrogate (ED BF BF)', [0xed, 0xbf, 0xbf]],
    ['a CESU surrogate pair', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
    ['a truncated 2-byte sequence', [0xc3]],
    ['a truncated 3-byte sequence', [0xe2, 0x82]],
    ['a truncated 4-byte sequence', [0xf0, 0x9f, 0x98]],
    ['a lead followed by ASCII', [0xe2, 0x41, 0x41]],
    ['F4 90 (above U+10FFFF)', [0xf4, 0x90, 0x80, 0x80]],
    ['F5', [0xf5, 0x80, 0x80, 0x80]],
    ['F8', [0xf8, 0x88, 0x80, 0x80, 0x80]],
    ['FE', [0xfe]],
    ['FF', [0xff]],
  ])('rejects %s and names the byte offset', (_what, bytes) => {
    const { buf, at } = withBytes(bytes);
    const offset = at + (bytes[0]! < 0x80 ? 1 : 0);
    const result = EnvelopeCodec.decode(buf);
    expect(result).toEqual({ envelope: {}, error: `payload is not valid UTF-8 (byte ${offset})`, warnings: [] });
    expect(EnvelopeCodec.accepts(result.envelope)).toBe(false);
    expect(firstInvalidUtf8(buf)).toBe(offset);
  });

  it('rejects a body cut in the middle of a character', () => {
    const full = Buffer.from('{"job":"urn:a","s":"☕"}');
    expect(EnvelopeCodec.decode(full.subarray(0, full.indexOf(0xe2) + 2)).error).toMatch(/^payload is not valid UTF-8/);
  });

  it.each([
    ['2-byte', 'é'],
    ['3-byte', '☕'],
    ['4-byte', '😀'],
    ['U+FFFF', '\uffff'],
    ['U+10FFFF', '\u{10ffff}'],
    ['U+D7FF', '\ud7ff'],
    ['U+E000', '\ue000'],
  ])('accepts well-formed %s characters', (_what, ch) => {
    const { buf } = withBytes([...Buffer.from(ch)]);
    const result = EnvelopeCodec.decode(buf);
    expect(result.error).toBeNull();
    expect((result.envelope.data as { s: string }).s).toBe(ch);
    expect(firstInvalidUtf8(buf)).toBe(-1);
  });

  it('firstInvalidUtf8 agrees with the platform validator on every 1- and 2-byte input', () => {
    for (let a = 0; a < 256; a++) {
      expect(firstInvalidUtf8(Uint8Array.of(a)) === -1).toBe(isUtf8(Uint8Array.of(a)));
      for (let b = 0; b < 256; b += 1) {
        const two = Uint8Array.of(a, b);
        if ((firstInvalidUtf8(two) === -1) !== isUtf8(two))
          throw new Error(`disagree on ${a.toString(16)} ${b.toString(16)}`);
      }
    }
  });
});

describe('byte order mark', () => {
  // Decision: refused, not skipped. No SDK emits one, and JSON.parse and Python's json.loads refuse
  // it too, so all cores reach the same verdict; it goes the poison route with this reason.
  const body = '{"job":"urn:a","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0}';

  it('a leading UTF-8 BOM (EF BB BF) is refused with a reason naming it', () => {
    const result = EnvelopeCodec.decode(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
    expect(result.envelope).toEqual({});
    expect(result.error).toMatch(/byte order mark/);
  });

  it('a leading U+FEFF in string input is refused the same way', () => {
    expect(EnvelopeCodec.decode(`\ufeff${body}`).error).toMatch(/byte order mark/);
  });

  it('U+FEFF inside a string value is ordinary data', () => {
    const result = EnvelopeCodec.decode(Buffer.from(body.replace('"data":{}', '"data":{"s":"\ufeff"}')));
    expect(result.error).toBeNull();
  });
});
