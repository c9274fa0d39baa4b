import type { Subscription } from './subscription.js';

/** A pattern from @EventPattern / @MessagePattern: it runs, but without what @BabelHandler adds (pure). */
export function foreignPatternWarning(pattern: string, isEventHandler: boolean): string {
  return (
    `${isEventHandler ? '@EventPattern' : '@MessagePattern'}('${pattern}') is bound to BabelPulsarServer: use ` +
    `@BabelHandler('${pattern}') instead, or its failures are reported as "Internal server error" without ` +
    'their cause. To keep a pattern for another transport off this one, give it that transport: ' +
    `@EventPattern('${pattern}', Transport.KAFKA)`
  );
}

/** Several subscriptions of one topic and retry by re-publish: every subscription receives each retry copy (pure). */
export function fanOutWarnings(subscriptions: readonly Subscription[]): string[] {
  const byTopic = new Map<string, string[]>();
  for (const { fullTopic, subscription } of subscriptions)
    byTopic.set(fullTopic, [...(byTopic.get(fullTopic) ?? []), subscription]);
  return [...byTopic]
    .filter(([, names]) => names.length > 1)
    .map(
      ([topic, names]) =>
        `${topic} is consumed through ${names.length} subscriptions (${names.join(', ')}) with ` +
        "retry 'republish': a retry copy goes back to the topic, so every one of them receives it (a handler " +
        "that already succeeded sees the message again). Use retry 'retry-topic': each subscription's retry " +
        'copies then go to its own <topic>.<subscription>.retry, which no other subscription reads',
    );
}
