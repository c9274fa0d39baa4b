// What the lag gauges read for a server (docs/operations.md#lag-gauges): each running subscription once, with its
// retry and dead-letter topics as full names.
import { LagGauges, type LagTarget } from '../../otel/subscription-lag.js';
import type { LagGaugeSetting } from '../options/lag-gauge-option.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import type { Subscription } from './subscription.js';

/** One target per subscription (its topic's and its retry topic's consumers share one). Pure. */
export function lagTargetsOf(models: readonly Subscription[]): LagTarget[] {
  const seen = new Set<Subscription>();
  const targets: LagTarget[] = [];
  for (const subscription of models) {
    if (seen.has(subscription)) continue;
    seen.add(subscription);
    targets.push({
      topic: subscription.fullTopic,
      subscription: subscription.name,
      retryTopic: subscription.retryTopic === null ? null : fullTopicName(subscription.retryTopic),
      deadLetterTopic: subscription.deadLetterTopic === null ? null : fullTopicName(subscription.deadLetterTopic),
    });
  }
  return targets;
}

/** The gauges of a server with the `lagGauges` option, started; null without it. */
export function startLagGauges(
  setting: LagGaugeSetting | undefined,
  running: () => readonly { subscription: Subscription }[],
  logger: { warn(line: string): void },
): LagGauges | null {
  if (!setting) return null;
  const gauges = new LagGauges(
    { ...setting, intervalMs: setting.intervalMs ?? 15_000 },
    () => lagTargetsOf(running().map(({ subscription }) => subscription)),
    (line) => logger.warn(line),
  );
  gauges.start();
  return gauges;
}
