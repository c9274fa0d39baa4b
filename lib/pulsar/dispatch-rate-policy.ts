/**
 * The broker's own dispatch-rate policy of one subscription (docs/retries.md#across-instances): the broker sends the
 * subscription's consumers, whichever instances they belong to, at most so many messages a second in all. Set
 * through the admin API's per-subscription topic policy, `POST /admin/v2/persistent/{tenant}/{namespace}/{topic}/
 * {subscription}/dispatchRate`; the broker applies it a moment later, once its policies topic has carried it.
 */
import type { AdminAccess } from './topic-lister.js';

/** The body the broker takes: messages per period, no byte limit (-1), a one-second period, not relative to publishing. */
export interface DispatchRateBody {
  dispatchThrottlingRateInMsg: number;
  dispatchThrottlingRateInByte: number;
  ratePeriodInSecond: number;
  relativeToPublishRate: boolean;
}

export const dispatchRateBody = (perSecond: number): DispatchRateBody => ({
  dispatchThrottlingRateInMsg: perSecond,
  dispatchThrottlingRateInByte: -1,
  ratePeriodInSecond: 1,
  relativeToPublishRate: false,
});

/** The policy's admin URL for a full topic name (`persistent://tenant/namespace/topic`) and a subscription. */
export function dispatchRateUrl(adminUrl: string, topic: string, subscription: string): string {
  const [domain, rest] = topic.split('://') as [string, string];
  const path = [...rest.split('/'), subscription].map(encodeURIComponent).join('/');
  return `${adminUrl.replace(/\/+$/, '')}/admin/v2/${domain}/${path}/dispatchRate`;
}

/** Why the broker did not take the policy: it could not be reached, or it answered with an error status. */
export class DispatchRateRefused extends Error {
  constructor(
    message: string,
    /** The HTTP status, or null when the admin API did not answer. */
    readonly status: number | null,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'DispatchRateRefused';
  }
}

export interface DispatchRateCall {
  access: AdminAccess;
  /** Full name. */
  topic: string;
  subscription: string;
  perSecond: number;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** Sets (overwrites) the subscription's dispatch rate; rejects with DispatchRateRefused. Never blocks a thread. */
export async function setSubscriptionDispatchRate(call: DispatchRateCall): Promise<void> {
  const { access, topic, subscription, perSecond, timeoutMs } = call;
  let response: Response;
  try {
    response = await (call.fetch ?? fetch)(dispatchRateUrl(access.adminUrl, topic, subscription), {
      method: 'POST',
      headers: { ...(await access.headers()), 'Content-Type': 'application/json' },
      body: JSON.stringify(dispatchRateBody(perSecond)),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DispatchRateRefused(`the admin API at ${access.adminUrl} did not answer (${reason})`, null, {
      cause: error,
    });
  }
  if (response.ok) return;
  const detail = (await response.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200);
  throw new DispatchRateRefused(
    `the admin API at ${access.adminUrl} answered HTTP ${response.status}${detail ? `: ${detail}` : ''}`,
    response.status,
  );
}
