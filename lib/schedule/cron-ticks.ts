import { Cron } from 'croner';
import { BabelQueueError } from '../envelope/index.js';
import { errorText } from '../envelope/error-text.js';

/** Parsed expressions, by time zone and text: a dispatcher computes the next tick of the same few on every pass. */
const parsed = new Map<string, Cron>();
const CACHE_LIMIT = 1_000;

function cronFor(expression: string, tz: string): Cron {
  const cacheKey = `${tz}\u0000${expression}`;
  let cron = parsed.get(cacheKey);
  if (cron === undefined) {
    // paused and without a callback: croner only computes times, it never sets a timer of its own.
    cron = new Cron(expression, { timezone: tz, paused: true });
    if (parsed.size >= CACHE_LIMIT) parsed.clear();
    parsed.set(cacheKey, cron);
  }
  return cron;
}

/** The expression, checked with croner in its time zone (an unknown zone is refused too); throws a BabelQueueError. */
export function checkCron(expression: unknown, tz: unknown): string {
  if (typeof expression !== 'string' || expression.trim() === '') {
    throw new BabelQueueError(
      `options.cron must be a cron expression such as "*/5 * * * *", got ${String(expression)}`,
    );
  }
  if (typeof tz !== 'string' || tz.trim() === '') {
    throw new BabelQueueError(`options.tz must be an IANA time zone such as "Europe/Paris", got ${String(tz)}`);
  }
  try {
    Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new BabelQueueError(`options.tz ${JSON.stringify(tz)} is not an IANA time zone (e.g. "Europe/Paris", "UTC")`);
  }
  try {
    cronFor(expression.trim(), tz).nextRun();
  } catch (error) {
    throw new BabelQueueError(
      `options.cron ${JSON.stringify(expression)} is not a cron expression: ${errorText(error)}`,
    );
  }
  return expression.trim();
}

/** The first tick strictly after `after`, or null when the expression never fires again. */
export function nextTickAfter(expression: string, tz: string, after: Date): Date | null {
  return cronFor(expression, tz).nextRun(after);
}
