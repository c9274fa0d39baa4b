import { isReplay } from '../pulsar/replay-property.js';

export { isReplay, REPLAY_BYPASS_VALUE } from '../pulsar/replay-property.js';

/**
 * Runs `effect` unless the message is a bypassed replay; returns its result, or undefined when skipped.
 * For side effects that must not happen twice when an operator redrives with `--bypass`.
 */
export async function bypassExternalEffects<T>(
  properties: Readonly<Record<string, string>> | undefined,
  effect: () => T | Promise<T>,
): Promise<T | undefined> {
  if (isReplay(properties)) return undefined;
  return await effect();
}
