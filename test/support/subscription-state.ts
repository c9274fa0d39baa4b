// One consumer's state as `server.describe()` reports it, for tests of what reads it (the dashboard, health).
import type { SubscriptionState } from '../../lib/nest/server/subscription-set.js';

/** A connected, idle Shared consumer of `orders` through `babelqueue`, with `overrides` on top. */
export const subscriptionState = (overrides: Partial<SubscriptionState> = {}): SubscriptionState => ({
  topic: 'persistent://public/default/orders',
  subscription: 'babelqueue',
  type: 'Shared',
  active: 0,
  overdue: 0,
  connected: true,
  paused: false,
  tripped: false,
  refused: [],
  handled: 0,
  failed: 0,
  ...overrides,
});
