import type { SubscriptionType } from './client-types.js';

/** Every subscription type, in the order the docs and errors list them (the option checks' one list). */
export const SUBSCRIPTION_TYPES = [
  'Exclusive',
  'Shared',
  'KeyShared',
  'Failover',
] as const satisfies SubscriptionType[];
