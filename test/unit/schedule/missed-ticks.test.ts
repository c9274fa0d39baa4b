// Which due ticks of a recurring schedule fire: late ones always, missed ones by the policy.
import { decideDueTicks, nextTickAfter, type MissedTickPolicy } from '../../../lib/schedule/index.js';

const everySecond = (tick: Date) => nextTickAfter('* * * * * *', 'UTC', tick);
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));

function decide(policy: MissedTickPolicy, due: number, now: number, maxFirings = 100) {
  const decision = decideDueTicks({
    due: at(due),
    now: at(now),
    policy,
    missedAfterMs: 5_000,
    maxFirings,
    nextAfter: everySecond,
  });
  return { fire: decision.fire.map((tick) => tick.getUTCSeconds()), next: decision.next?.getUTCSeconds() };
}

it.each(['skip', 'once', 'all'] as const)(
  '%s: a tick that is merely late fires, and the next one is in the future',
  (policy) => {
    expect(decide(policy, 10, 10)).toEqual({ fire: [10], next: 11 });
    expect(decide(policy, 10, 13)).toEqual({ fire: [10, 11, 12, 13], next: 14 });
  },
);

it('skip drops the ticks older than missedAfterMs and fires the recent ones', () => {
  expect(decide('skip', 0, 20)).toEqual({ fire: [15, 16, 17, 18, 19, 20], next: 21 });
});

it('once fires one message for all the missed ticks (the latest of them), then the recent ones', () => {
  expect(decide('once', 0, 20)).toEqual({ fire: [14, 15, 16, 17, 18, 19, 20], next: 21 });
  // Every due tick missed: one firing.
  expect(
    decideDueTicks({
      due: at(0),
      now: at(30),
      policy: 'once',
      missedAfterMs: 60_000 * 60,
      maxFirings: 100,
      nextAfter: everySecond,
    }).fire.length,
  ).toBe(31); // all within missedAfterMs: all late, none missed
});

it('all fires every due tick, at most maxFirings per pass; the rest stay due', () => {
  expect(decide('all', 0, 20)).toEqual({ fire: Array.from({ length: 21 }, (_, i) => i), next: 21 });
  expect(decide('all', 0, 20, 5)).toEqual({ fire: [0, 1, 2, 3, 4], next: 5 });
});

it('a cron in a time zone ticks on its local clock', () => {
  // 09:00 in Paris is 08:00 UTC in winter, 07:00 UTC in summer.
  expect(nextTickAfter('0 9 * * *', 'Europe/Paris', new Date('2026-01-15T12:00:00Z'))?.toISOString()).toBe(
    '2026-01-16T08:00:00.000Z',
  );
  expect(nextTickAfter('0 9 * * *', 'Europe/Paris', new Date('2026-07-15T12:00:00Z'))?.toISOString()).toBe(
    '2026-07-16T07:00:00.000Z',
  );
});
