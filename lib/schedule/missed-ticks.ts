/**
 * What happens to the ticks of a recurring schedule that came due while no instance ran (docs/scheduling.md):
 * `skip` drops them, `once` fires one message for all of them (at the latest), `all` fires each of them.
 */
export type MissedTickPolicy = 'skip' | 'once' | 'all';

export const MISSED_TICK_POLICIES: readonly MissedTickPolicy[] = ['skip', 'once', 'all'];

/** What a dispatcher does with one due recurring schedule on this pass. */
export interface TickDecision {
  /** The ticks to fire now, oldest first: one message each. */
  fire: Date[];
  /** The schedule's next tick afterwards (null: the expression never fires again). */
  next: Date | null;
}

export interface DueTicksInput {
  /** The schedule's stored next tick (due: at or before now). */
  due: Date;
  now: Date;
  policy: MissedTickPolicy;
  /** A tick older than this (now − tick) is missed rather than late. */
  missedAfterMs: number;
  /** At most this many messages per schedule and pass; the rest stay due for the next pass. */
  maxFirings: number;
  /** The tick after a given one (the cron expression in its time zone). */
  nextAfter: (tick: Date) => Date | null;
}

/**
 * Decides which due ticks of a recurring schedule fire. A tick at most `missedAfterMs` old is merely late and
 * always fires (a slow pass never loses a tick); older ones were missed and follow the policy. Pure: the clock
 * and the cron expression come in, so every instance decides alike.
 */
export function decideDueTicks(input: DueTicksInput): TickDecision {
  const { now, policy, missedAfterMs, maxFirings, nextAfter } = input;
  const missedBefore = now.getTime() - missedAfterMs;
  const fire: Date[] = [];
  let lastMissed: Date | null = null;
  let tick: Date | null = input.due;
  // Walking a long outage tick by tick would be slow for a schedule every second: cap the walk and skip ahead.
  let steps = 0;
  while (tick !== null && tick.getTime() <= now.getTime() && fire.length < maxFirings) {
    if (tick.getTime() < missedBefore) {
      if (policy === 'all') fire.push(tick);
      else lastMissed = tick;
      if (policy !== 'all' && ++steps >= 100_000) {
        // Past this many missed ticks, jump to the first one that is not missed (its predecessor is unknown).
        tick = nextAfter(new Date(missedBefore - 1));
        continue;
      }
    } else {
      if (lastMissed !== null && policy === 'once') {
        fire.push(lastMissed);
        lastMissed = null;
        if (fire.length >= maxFirings) break;
      }
      fire.push(tick);
    }
    tick = nextAfter(tick);
  }
  if (lastMissed !== null && policy === 'once' && fire.length < maxFirings) fire.push(lastMissed);
  // When the cap stopped the walk, `tick` is the first one not fired: it stays due for the next pass.
  return { fire, next: tick };
}
