// The circuit breaker of one subscription (docs/retries.md#circuit-breaker), as a pure state machine: outcomes and a
// clock in, state changes out. Whoever owns it pauses the subscription when it opens and resumes it to probe.
import type { RaiseOptionError } from '../options/option-table.js';
import type { SettledEvent } from './processor-context.js';

/** How a breaker trips and recovers. */
export interface CircuitBreakerOptions {
  /** Failures / outcomes over the window at or above which it trips, in (0, 1]. */
  failureRatio: number;
  /** The sliding window the ratio is taken over, ms. */
  windowMs: number;
  /** Outcomes the window must hold before the ratio counts (a few failures at a quiet time do not trip it). */
  minimumMessages: number;
  /** How long it stays open (the subscription paused) before it probes, ms. */
  openMs: number;
  /** Successes in a row, half-open, that close it; one failure opens it again. */
  probes: number;
}

export type CircuitBreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerChange {
  from: CircuitBreakerState;
  to: CircuitBreakerState;
  /** Why, for the one log line of the change. */
  why: string;
}

/** Outcomes kept per window: a ring of (time, failed), oldest first. */
class OutcomeWindow {
  private times: number[] = [];
  private failedFlags: boolean[] = [];
  private head = 0;
  private failures = 0;

  add(at: number, failed: boolean): void {
    this.times.push(at);
    this.failedFlags.push(failed);
    if (failed) this.failures++;
  }

  /** Forgets the outcomes older than `since`. */
  prune(since: number): void {
    while (this.head < this.times.length && this.times[this.head]! < since) {
      if (this.failedFlags[this.head]) this.failures--;
      this.head++;
    }
    // Compact now and then so that the arrays do not grow for ever.
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.failedFlags = this.failedFlags.slice(this.head);
      this.head = 0;
    }
  }

  get size(): number {
    return this.times.length - this.head;
  }

  get failed(): number {
    return this.failures;
  }

  clear(): void {
    this.times = [];
    this.failedFlags = [];
    this.head = 0;
    this.failures = 0;
  }
}

export class CircuitBreaker {
  private current: CircuitBreakerState = 'closed';
  private readonly window = new OutcomeWindow();
  private openedAt = 0;
  private probeSuccesses = 0;

  constructor(
    private readonly options: CircuitBreakerOptions,
    private readonly now: () => number,
  ) {}

  get state(): CircuitBreakerState {
    return this.current;
  }

  /** When an open breaker is due to probe (epoch ms); null unless open. */
  get probeAt(): number | null {
    return this.current === 'open' ? this.openedAt + this.options.openMs : null;
  }

  /** One handler outcome; returns the change it causes, if any. Outcomes that end while open are not counted. */
  record(outcome: 'success' | 'failure'): CircuitBreakerChange | null {
    const at = this.now();
    if (this.current === 'open') return null;
    if (this.current === 'half-open') {
      if (outcome === 'failure') return this.open(at, 'a probe failed');
      this.probeSuccesses++;
      if (this.probeSuccesses < this.options.probes) return null;
      this.current = 'closed';
      this.window.clear();
      return { from: 'half-open', to: 'closed', why: `${this.probeSuccesses} probe(s) succeeded` };
    }
    this.window.add(at, outcome === 'failure');
    this.window.prune(at - this.options.windowMs);
    const { size, failed } = this.window;
    if (size < this.options.minimumMessages || failed / size < this.options.failureRatio) return null;
    return this.open(
      at,
      `${failed} of the last ${size} message(s) failed within ${this.options.windowMs} ms ` +
        `(threshold ${this.options.failureRatio})`,
    );
  }

  /** Moves an open breaker whose wait is over to half-open; returns the change, or null when it is not due. */
  probe(): CircuitBreakerChange | null {
    const due = this.probeAt;
    if (due === null || this.now() < due) return null;
    this.current = 'half-open';
    this.probeSuccesses = 0;
    return { from: 'open', to: 'half-open', why: `${this.options.openMs} ms passed: probing` };
  }

  private open(at: number, why: string): CircuitBreakerChange {
    const from = this.current;
    this.current = 'open';
    this.openedAt = at;
    this.window.clear();
    return { from, to: 'open', why };
  }
}

const BREAKER_KEYS = ['failureRatio', 'windowMs', 'minimumMessages', 'openMs', 'probes'] as const;

/** The defaults of each setting of `circuitBreaker: { … }` that is not given. */
export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerOptions = {
  failureRatio: 0.5,
  windowMs: 30_000,
  minimumMessages: 20,
  openMs: 30_000,
  probes: 3,
};

/** `circuitBreaker`: `false`/absent (off), `true` (the defaults) or some of the settings over the defaults. */
export function checkCircuitBreakerOptions(
  value: unknown,
  name: string,
  raise: RaiseOptionError,
): CircuitBreakerOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { ...DEFAULT_CIRCUIT_BREAKER };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return raise(`${name} must be true, false or { ${BREAKER_KEYS.join(', ')} }`, 'type');
  const given = value as Record<string, unknown>;
  const unknown = Object.keys(given).filter((key) => !(BREAKER_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0)
    return raise(`${name} has unknown key(s) ${unknown.join(', ')} (allowed: ${BREAKER_KEYS.join(', ')})`, 'type');
  const checked = { ...DEFAULT_CIRCUIT_BREAKER };
  for (const key of BREAKER_KEYS) {
    const setting = given[key];
    if (setting === undefined) continue;
    const ratio = key === 'failureRatio';
    const valid =
      typeof setting === 'number' &&
      (ratio ? setting > 0 && setting <= 1 : Number.isInteger(setting) && setting >= (key === 'openMs' ? 0 : 1));
    if (!valid)
      return raise(
        `${name}.${key} must be ${ratio ? 'a number in (0, 1]' : key === 'openMs' ? 'an integer >= 0' : 'an integer >= 1'}, got ${JSON.stringify(setting)}`,
        'range',
      );
    checked[key] = setting as number;
  }
  return checked;
}

/**
 * What a settled delivery tells the breaker (pure): a handler that ended well is a success, a handler failure (retried,
 * or dead-lettered at its last attempt) a failure. Not counted: a BabelNonRetriableError or a dead letter the handler
 * asked for (the message is at fault, not a dependency), poison and gate-rejected deliveries (no handler ran), an
 * unknown URN, and an acknowledgement that failed.
 */
export function breakerOutcomeOf(event: SettledEvent): 'success' | 'failure' | null {
  if (event.urn === null || event.unknownUrn !== undefined || event.nonRetriable === true) return null;
  switch (event.action) {
    case 'ack':
      return 'success';
    case 'retry':
    case 'nack':
    case 'drop':
      return 'failure';
    case 'dead-letter':
    case 'block':
      return event.reason === 'failed' ? 'failure' : null;
    default:
      return null;
  }
}
