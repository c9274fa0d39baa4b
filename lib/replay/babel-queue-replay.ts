import { adminUrlFor } from '../pulsar/admin-url.js';
import type { AdminConnection } from './admin-calls.js';
import {
  replaySubscription,
  type SubscriptionReplayOptions,
  type SubscriptionReplayResult,
} from './subscription-replay.js';

/**
 * Replays subscriptions from a point in time or a message id, through the broker's admin API: `new
 * BabelQueueReplay({ adminUrl })`, or `BabelQueueReplay.forServiceUrl(serviceUrl, token)` for the admin API of a
 * service URL (the web port of its host).
 */
export class BabelQueueReplay {
  constructor(private readonly admin: AdminConnection) {}

  /** The replay of the admin API of a service URL's host (the web port; 8443 for `pulsar+ssl://`). */
  static forServiceUrl(serviceUrl: string, token?: string): BabelQueueReplay {
    return new BabelQueueReplay({ adminUrl: adminUrlFor(serviceUrl), ...(token !== undefined && { token }) });
  }

  /** Counts what a replay would re-deliver; moves the subscription only with `yes: true`. */
  run(options: SubscriptionReplayOptions): Promise<SubscriptionReplayResult> {
    return replaySubscription(this.admin, options);
  }
}
