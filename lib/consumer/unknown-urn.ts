// What a subscription does with a message whose URN has no handler there (docs/retries.md#unknown-urns), named as in
// the other BabelQueue cores. Pure: the strategy and the delivery's redelivery count in, the decision out.

/** The unknown-URN strategies, in the other cores' words. */
export const UNKNOWN_URN_STRATEGIES = ['fail', 'dead_letter', 'delete', 'release'] as const;
/**
 * `fail`: retried, then dead-lettered (reason `unknown_urn`), or given to the `onUnknownUrn` hook when one is set;
 * `dead_letter`: dead-lettered at once; `delete`: acknowledged, logged and counted; `release`: negatively
 * acknowledged so that another consumer of the subscription (an instance that knows the URN) takes it.
 */
export type UnknownUrnStrategy = (typeof UNKNOWN_URN_STRATEGIES)[number];

export interface UnknownUrnPolicy {
  strategy: UnknownUrnStrategy;
  /** `release`: deliveries released before the message falls back to `fail`, so it cannot circle for ever. */
  maxReleases: number;
}

/** Today's behaviour, the contract's: the hook if there is one, else retried and dead-lettered. */
export const FAIL_ON_UNKNOWN_URN: UnknownUrnPolicy = { strategy: 'fail', maxReleases: 10 };

/**
 * What to do with one delivery of an unknown URN. A release is bounded by the broker's redelivery count (each
 * release is a redelivery): once `maxReleases` deliveries were released, nobody that knows the URN took it, and
 * the delivery fails as `fail` says (its attempts include those redeliveries, so it is usually dead-lettered).
 */
export function decideUnknownUrn(policy: UnknownUrnPolicy, redeliveryCount: number): UnknownUrnStrategy {
  if (policy.strategy === 'release' && redeliveryCount >= policy.maxReleases) return 'fail';
  return policy.strategy;
}
