// resolve() for a consumer in a unit test: one function runs every handler, told the URN as the server's
// handlers are told their own.
import { isRetriableByDefault, type Resolution } from '../../lib/consumer/index.js';
import type { RetryPolicy } from '../../lib/consumer/retry-delay.js';
import type { SettleRequests } from '../../lib/consumer/settle-request.js';
import type { Envelope } from '../../lib/envelope/index.js';
import type { PulsarMessage } from '../../lib/pulsar/client-types.js';

export type TestRun = (
  urn: string,
  envelope: Envelope,
  message: PulsarMessage,
  requests: SettleRequests,
) => Promise<unknown>;

export interface TestHandlerSettings {
  /** The URNs with a handler here; default: every URN. */
  handles?: (urn: string) => boolean;
  /** Default 3, the tests' usual server setting. */
  maxAttempts?: number;
  /** ms; default 0 (none). */
  timeoutMs?: number;
  retryPolicy?: RetryPolicy;
  isRetriable?: (error: unknown) => boolean;
}

/** Each URN `handles` accepts is run by `run` with these settings; any other URN has no handler here. */
export function handledBy(run: TestRun, settings: TestHandlerSettings = {}): (urn: string) => Resolution {
  const { handles, maxAttempts = 3, timeoutMs = 0, retryPolicy, isRetriable } = settings;
  return (urn) =>
    (handles?.(urn) ?? true)
      ? {
          maxAttempts,
          timeoutMs,
          ...(retryPolicy && { retryPolicy }),
          isRetriable: isRetriable ?? isRetriableByDefault,
          run: (envelope, message, requests) => run(urn, envelope, message, requests),
        }
      : null;
}
