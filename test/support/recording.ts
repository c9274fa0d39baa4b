// Small helpers of the unit tests that run a server on the testing kit: a logger that keeps its lines, and a wait
// for a condition (the kit settles on later ticks).

/** A Nest-shaped logger whose every line, of any level, lands in `lines`. */
export function recordingLogger(): {
  lines: string[];
  logger: Record<'log' | 'warn' | 'error' | 'debug', (message: string) => void>;
} {
  const lines: string[] = [];
  const push = (message: string) => lines.push(message);
  return { lines, logger: { log: push, warn: push, error: push, debug: push } };
}

/** Waits (up to 5 s) until `check` holds, and fails the test when it never does. */
export async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}
