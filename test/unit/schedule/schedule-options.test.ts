// A schedule's timing, checked before anything is stored.
import { checkScheduleId, checkScheduleTiming } from '../../../lib/schedule/index.js';

const now = new Date('2026-12-03T10:00:00.000Z');

it('at: a Date, epoch ms or ISO text; delay: ms from now; a past time is due at once', () => {
  expect(checkScheduleTiming({ at: new Date('2026-12-03T11:00:00Z') }, now)).toEqual({
    kind: 'once',
    firstTick: new Date('2026-12-03T11:00:00Z'),
  });
  expect(checkScheduleTiming({ at: now.getTime() + 5 }, now).firstTick.getTime()).toBe(now.getTime() + 5);
  expect(checkScheduleTiming({ at: '2026-12-03T12:00:00+01:00' }, now).firstTick.toISOString()).toBe(
    '2026-12-03T11:00:00.000Z',
  );
  expect(checkScheduleTiming({ delay: 1500.2 }, now).firstTick.getTime()).toBe(now.getTime() + 1501);
  expect(checkScheduleTiming({ at: '2020-01-01T00:00:00Z' }, now).firstTick.getUTCFullYear()).toBe(2020);
});

it('cron: the first tick after now in its time zone, default UTC and missed "once"', () => {
  expect(checkScheduleTiming({ cron: '*/15 * * * *' }, now)).toEqual({
    kind: 'cron',
    cron: '*/15 * * * *',
    tz: 'UTC',
    missed: 'once',
    firstTick: new Date('2026-12-03T10:15:00.000Z'),
  });
  expect(checkScheduleTiming({ cron: '0 0 12 * * *', tz: 'America/New_York', missed: 'all' }, now)).toMatchObject({
    firstTick: new Date('2026-12-03T17:00:00.000Z'),
    missed: 'all',
  });
});

it.each([
  [{}, /exactly one of options.at, options.delay or options.cron, got none/],
  [{ at: now, delay: 5 }, /got at and delay/],
  [{ delay: -1 }, /options.delay must be a finite number of milliseconds >= 0/],
  [{ delay: Number.NaN }, /options.delay must be a finite number/],
  [{ at: 'tomorrow' }, /options.at must be a Date, epoch milliseconds or an ISO 8601 time/],
  [{ at: '1700000000000' }, /options.at must be a Date/],
  [{ at: new Date('x') }, /options.at must be a Date/],
  [{ cron: 'every minute' }, /options.cron "every minute" is not a cron expression/],
  [{ cron: '* * * * *', tz: 'Mars/Olympus' }, /options.tz "Mars\/Olympus" is not an IANA time zone/],
  [{ cron: '* * * * *', missed: 'twice' }, /options.missed must be one of skip, once, all/],
  [{ delay: 5, tz: 'UTC' }, /options.tz applies to a cron schedule only/],
  [{ at: now, missed: 'all' }, /options.missed applies to a cron schedule only/],
])('%j is refused', (options, message) => {
  expect(() => checkScheduleTiming(options as never, now)).toThrow(message);
});

it('an id is a non-blank string of at most 200 characters', () => {
  expect(checkScheduleId(' nightly ')).toBe('nightly');
  expect(() => checkScheduleId('')).toThrow(/options.id must be a non-blank string/);
  expect(() => checkScheduleId(7)).toThrow(/options.id must be a non-blank string/);
  expect(() => checkScheduleId('x'.repeat(201))).toThrow(/at most 200 characters/);
});
