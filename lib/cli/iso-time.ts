// A strict reader of the ISO 8601 times the CLI takes. `Date.parse` rolls an impossible date over
// (2026-02-30 becomes 2026-03-02), so an operator's typo would silently pick another day: here each part is checked
// against its range and the parsed instant must give back the same parts (a round trip), or the text is refused.

/** Why an ISO-shaped text is not a time that exists. */
export class IsoTimeError extends Error {}

// YYYY-MM-DD, then optionally T (or a space, as RFC 3339 allows) HH:MM[:SS[.fraction]] and a zone (Z, ±HH:MM, ±HHMM).
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/;

/** Whether the text has the shape of an ISO 8601 date (it may still name a day that does not exist). */
export function looksLikeIsoTime(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}/.test(text.trim());
}

interface TimeParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/**
 * Epoch milliseconds of an ISO 8601 time; throws IsoTimeError when the text is not one or names a day or an hour
 * that does not exist. A date alone is midnight UTC; a time without a zone is local time (as `Date.parse` reads it).
 */
export function parseIsoTime(text: string): number {
  const match = ISO_TIME.exec(text.trim());
  if (!match) throw new IsoTimeError(`${JSON.stringify(text)} is not an ISO 8601 time such as 2026-12-02T00:40:00Z`);
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHour, offsetMinute] = match;
  const parts: TimeParts = {
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour ?? 0),
    minute: Number(minute ?? 0),
    second: Number(second ?? 0),
    millisecond: Number((fraction ?? '0').padEnd(3, '0').slice(0, 3)),
  };
  checkRanges(text, parts);
  const dateOnly = hour === undefined;
  if (dateOnly || zulu !== undefined) return utcInstant(text, parts);
  if (sign === undefined) return localInstant(text, parts);
  const offsetHours = Number(offsetHour);
  const offsetMinutes = Number(offsetMinute);
  if (offsetHours > 23 || offsetMinutes > 59) throw new IsoTimeError(`${JSON.stringify(text)} has no such zone offset`);
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return utcInstant(text, parts) - offsetMs;
}

function checkRanges(text: string, parts: TimeParts): void {
  const wrong =
    parts.month < 1 || parts.month > 12
      ? 'month'
      : parts.day < 1 || parts.day > daysIn(parts.year, parts.month)
        ? 'day'
        : parts.hour > 23
          ? 'hour'
          : parts.minute > 59
            ? 'minute'
            : parts.second > 59
              ? 'second'
              : undefined;
  if (wrong !== undefined) throw new IsoTimeError(`${JSON.stringify(text)} has no such ${wrong}`);
}

function daysIn(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one; setUTCFullYear keeps years 0-99 as they are.
  const last = new Date(0);
  last.setUTCFullYear(year, month, 0);
  return last.getUTCDate();
}

function utcInstant(text: string, parts: TimeParts): number {
  const at = new Date(0);
  at.setUTCFullYear(parts.year, parts.month - 1, parts.day);
  at.setUTCHours(parts.hour, parts.minute, parts.second, parts.millisecond);
  const same =
    at.getUTCFullYear() === parts.year &&
    at.getUTCMonth() === parts.month - 1 &&
    at.getUTCDate() === parts.day &&
    at.getUTCHours() === parts.hour &&
    at.getUTCMinutes() === parts.minute &&
    at.getUTCSeconds() === parts.second;
  if (!same) throw new IsoTimeError(`${JSON.stringify(text)} is not a time that exists`);
  return at.getTime();
}

function localInstant(text: string, parts: TimeParts): number {
  const at = new Date(0);
  at.setFullYear(parts.year, parts.month - 1, parts.day);
  at.setHours(parts.hour, parts.minute, parts.second, parts.millisecond);
  // A local time skipped by a daylight-saving change (02:30 on the spring-forward night) comes back as another hour.
  const same =
    at.getFullYear() === parts.year &&
    at.getMonth() === parts.month - 1 &&
    at.getDate() === parts.day &&
    at.getHours() === parts.hour &&
    at.getMinutes() === parts.minute &&
    at.getSeconds() === parts.second;
  if (!same)
    throw new IsoTimeError(`${JSON.stringify(text)} is not a local time that exists (a clock change skips it)`);
  return at.getTime();
}
