// The `dispatchRate` option at work (docs/retries.md#across-instances): each subscription the server opens gets the
// broker's dispatch-rate policy, once per topic and subscription. A policy that cannot be set is a warning, not a
// failed start: the policy lives on the broker, where another instance or an earlier start may have set it, and
// handling messages does not depend on the admin API.
import type { ConsumerLogger } from '../../consumer/index.js';
import { DispatchRateRefused, setSubscriptionDispatchRate } from '../../pulsar/dispatch-rate-policy.js';
import { adminAccessOf, type AdminAccess } from '../../pulsar/topic-lister.js';
import { fullTopicName } from '../../pulsar/topic-name.js';
import type { DispatchRateSetting } from '../options/dispatch-rate-option.js';

/** One consumer's topic and subscription (a RunningSubscription's). */
export interface DispatchTarget {
  readonly readsFrom: string;
  readonly subscription: { readonly name: string };
}

export interface DispatchRatesDeps {
  setting: DispatchRateSetting;
  /** The client as the user gave it: a client the library made knows its admin API. */
  client: object;
  logger: ConsumerLogger;
  /** Per admin call, ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class SubscriptionDispatchRates {
  /** `topic subscription` pairs already set (or warned about) by this server. */
  private readonly done = new Set<string>();
  private access: Promise<AdminAccess | undefined> | undefined;

  constructor(private readonly deps: DispatchRatesDeps) {}

  /** Sets the policy of each target not set yet; resolves once every call ended (never rejects). */
  async apply(targets: readonly DispatchTarget[]): Promise<void> {
    const fresh = new Map<string, { topic: string; subscription: string }>();
    for (const { readsFrom, subscription } of targets) {
      const topic = fullTopicName(readsFrom);
      const key = `${topic} ${subscription.name}`;
      if (!this.done.has(key)) fresh.set(key, { topic, subscription: subscription.name });
    }
    if (fresh.size === 0) return;
    for (const key of fresh.keys()) this.done.add(key);
    const access = await this.adminAccess();
    if (!access) return;
    await Promise.all([...fresh.values()].map((target) => this.set(access, target.topic, target.subscription)));
  }

  private adminAccess(): Promise<AdminAccess | undefined> {
    this.access ??= this.findAccess().catch((error: unknown) => {
      this.deps.logger.warn(`dispatchRate not set: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    return this.access;
  }

  private async findAccess(): Promise<AdminAccess | undefined> {
    const { adminUrl, token } = this.deps.setting;
    const bearer = async (): Promise<Record<string, string>> => (token ? { Authorization: `Bearer ${token}` } : {});
    if (adminUrl !== undefined) return { adminUrl, headers: bearer };
    const known = await adminAccessOf(this.deps.client);
    if (known) return token ? { adminUrl: known.adminUrl, headers: bearer } : known;
    this.deps.logger.warn(
      "dispatchRate not set: the Pulsar client was not created by the library, so its broker's admin API is " +
        'unknown; give dispatchRate.adminUrl (the web service, e.g. http://broker:8080)',
    );
    return undefined;
  }

  private async set(access: AdminAccess, topic: string, subscription: string): Promise<void> {
    const { perSecond } = this.deps.setting;
    try {
      await setSubscriptionDispatchRate({
        access,
        topic,
        subscription,
        perSecond,
        timeoutMs: this.deps.timeoutMs ?? 5_000,
        ...(this.deps.fetch && { fetch: this.deps.fetch }),
      });
      this.deps.logger.log(
        `dispatchRate: the broker delivers subscription ${subscription} of ${topic} at most ${perSecond} messages ` +
          'a second, all instances together (its dispatch-rate policy, set now; applied within seconds)',
      );
    } catch (error) {
      this.deps.logger.warn(
        `dispatchRate not set on subscription ${subscription} of ${topic}: ${(error as Error).message}; ` +
          `${fixFor(error)}. Its messages are delivered without a broker limit unless a policy set earlier holds`,
      );
    }
  }
}

/** What to change for a refused policy (pure). */
export function fixFor(error: unknown): string {
  const status = error instanceof DispatchRateRefused ? error.status : null;
  if (status === null) return "check dispatchRate.adminUrl: the broker's web service (e.g. http://broker:8080)";
  if (status === 401 || status === 403)
    return "the role needs the right to set the topic's policies (a tenant admin or superuser); see dispatchRate.token";
  if (status === 405)
    return 'the broker needs topicLevelPoliciesEnabled=true and systemTopicEnabled=true (the 4.x defaults)';
  // The topic exists where the client subscribed (the policy needs it, not the subscription): another cluster.
  if (status === 404) return "dispatchRate.adminUrl may name another cluster than the client's";
  return 'see the broker log';
}
