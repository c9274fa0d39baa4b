// The strict ISO 8601 reader of the CLI: every part in range, and the parsed instant gives the same parts back.
import { IsoTimeError, looksLikeIsoTime, parseIsoTime } from '../../../lib/cli/iso-time.js';

describe('parseIsoTime', () => {
  it('reads the times Date.parse reads when they exist', () => {
    for (const text of [
      '2026-12-02T00:40:00Z',
      '2026-12-02T00:40:00.123Z',
      '2026-12-02T00:40Z',
      '2026-12-02T01:40:00+01:00',
      '2026-12-01T19:10:00-05:30',
      '2024-02-29T12:00:00Z',
      '2000-02-29',
      '2026-12-31T23:59:59Z',
    ])
      expect(parseIsoTime(text)).toBe(Date.parse(text));
  });

  it('reads an offset without a colon, a space separator and a longer fraction', () => {
    expect(parseIsoTime('2026-12-02T01:40:00+0100')).toBe(Date.parse('2026-12-02T00:40:00Z'));
    expect(parseIsoTime('2026-12-02 00:40:00Z')).toBe(Date.parse('2026-12-02T00:40:00Z'));
    expect(parseIsoTime('2026-12-02T00:40:00.123456789Z')).toBe(Date.parse('2026-12-02T00:40:00.123Z'));
  });

  it('reads a time without a zone as local time', () => {
    expect(parseIsoTime('2026-07-02T10:20:30')).toBe(new Date(2026, 6, 2, 10, 20, 30).getTime());
  });

  it.each([
    ['2026-02-30T00:00:00Z', /no such day/],
    ['2026-02-29', /no such day/],
    ['1900-02-29T00:00:00Z', /no such day/],
    ['2026-04-31T00:00:00Z', /no such day/],
    ['2026-01-00T00:00:00Z', /no such day/],
    ['2026-13-01T00:00:00Z', /no such month/],
    ['2026-00-10T00:00:00Z', /no such month/],
    ['2026-12-02T25:00:00Z', /no such hour/],
    ['2026-12-02T24:00:00Z', /no such hour/],
    ['2026-12-02T10:60:00Z', /no such minute/],
    ['2026-12-02T10:00:61Z', /no such second/],
    ['2026-12-02T10:00:00+24:00', /no such zone offset/],
    ['2026-12-02T10:00:00+01:75', /no such zone offset/],
  ])('refuses %s, which does not exist', (text, reason) => {
    expect(() => parseIsoTime(text)).toThrow(IsoTimeError);
    expect(() => parseIsoTime(text)).toThrow(reason);
  });

  it.each([
    '2026-12-02T10',
    '2026-12-02T10:00:00ZZ',
    '2026-12-02X',
    '2026-1-02',
    '26-12-02',
    '2026-12-02T10:00:00 UTC',
  ])('refuses %s, which is not ISO 8601', (text) => {
    expect(() => parseIsoTime(text)).toThrow(/is not an ISO 8601 time/);
  });

  it('tells an ISO-shaped text from an age', () => {
    expect(looksLikeIsoTime(' 2026-02-30')).toBe(true);
    expect(looksLikeIsoTime('15m')).toBe(false);
  });
});
