import type { Envelope } from '../envelope/index.js';
import type { RetryPolicy } from './retry-delay.js';

/** What the decision logic needs to know about one delivered Pulsar message. */
export interface InboundMessage {
  payload: Buffer;
  properties: Record<string, string>;
  redeliveryCount: number;
  /** The topic the message was consumed from (full or short name). */
  topic: string;
}

/** Step one: what a delivery is, before any handler runs. */
export type Inspection =
  | {
      kind: 'gate-rejected';
      /** The bq-schema-version value that was refused. */
      received: string;
    }
  | {
      kind: 'poison';
      /** Why the body can never reach a handler. */
      reason: string;
      /** Reconciled attempts (from bq-attempts or the redelivery count; the body is unusable). */
      attempts: number;
    }
  | {
      kind: 'dispatch';
      /** The URN that routes: bq-job when not blank, else the body's (docs/contract.md#routing). */
      urn: string;
      /** The body's envelope, with `attempts` set to the reconciled value. */
      envelope: Envelope;
      attempts: number;
      /** Set when bq-job and the body URN differ; the property still routes. */
      mismatch: { propertyUrn: string; bodyUrn: string } | null;
      /** Forbidden keys dropped while decoding. */
      warnings: string[];
    };

/** Step two's input: how the handler (or the unknown-URN path) ended. */
export type Outcome =
  | {
      kind: 'handled';
      /** What the handler returned (the reply to a request; docs/contract.md#requests-and-replies). */
      result?: unknown;
    }
  | {
      kind: 'failed';
      reason: 'failed' | 'unknown_urn';
      error: unknown;
      /** False when retrying cannot help (BabelNonRetriableError, a 4xx HttpException): straight to the cap. */
      retriable?: boolean;
      /** The retry copy's delay, ms, instead of the retry policy's (the handler's `ctx.retry({ delayMs })`). */
      delayMs?: number;
    }
  /** An unknown URN set aside by its subscription's strategy (lib/consumer/unknown-urn.ts): not a failure. */
  | { kind: 'set-aside'; strategy: 'delete' | 'release' };

export interface SettlementPolicy {
  maxAttempts: number;
  /**
   * How a retry is made: a copy re-published to the topic, a negative acknowledgement, or in place (`ordering:
   * 'key'`): the original stays unacknowledged and runs again in its key's lane after the delay.
   */
  retryBy: 'republish' | 'nack' | 'in-place';
  /** Whether a dead-letter destination exists. */
  deadLetter: boolean;
  /** Epoch ms used for failed_at and for the retry copy's delivery time. */
  now: number;
  /** Spacing of retries by re-publish; absent = a retry is due at once (docs/contract.md#retries). */
  retryPolicy?: RetryPolicy;
  /** A number in [0, 1) drawn by the caller for the policy's jitter (keeps the decision pure). */
  jitterSample?: number;
  /**
   * The subscription's circuit breaker is open or probing: a retriable failure at its last attempt is released
   * (negatively acknowledged, its attempts as they were) instead of dead-lettered, since the dependency is at fault.
   */
  holdLastAttempt?: boolean;
}

/** A message to write before the original may be acknowledged. */
export interface OutboundCopy {
  data: Buffer;
  properties: Record<string, string>;
  /** Absolute delivery time, epoch ms (a delayed retry copy only). */
  deliverAt?: number;
}

/** What the I/O layer must do with the original message. */
export type Settlement =
  | { action: 'ack'; warning?: string }
  | { action: 'nack'; why: string }
  /** `delayMs`: how long the copy waits on the broker (0 = due at once). */
  | { action: 'retry'; copy: OutboundCopy; attempt: number; delayMs: number }
  /** Run again by this consumer after `delayMs`, unacknowledged meanwhile (a redelivery continues the count). */
  | { action: 'retry-in-place'; attempt: number; delayMs: number }
  | {
      action: 'dead-letter';
      record: OutboundCopy;
      reason: 'failed' | 'unknown_urn' | 'poison';
      /** The counted attempt that ended here. */
      attempt: number;
      /** The failure was not retriable, so the cap was not waited for. */
      nonRetriable?: boolean;
    }
  /** Exhausted without a dead-letter destination: acknowledged, dropped and logged. */
  | { action: 'drop'; warning: string; attempt: number };
