import type { Envelope } from '../envelope/index.js';

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
      /** The URN that routes: bq-job when not blank, else the body's (Decision D6). */
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
export type Outcome = { kind: 'handled' } | { kind: 'failed'; reason: 'failed' | 'unknown_urn'; error: unknown };

export interface SettlementPolicy {
  maxAttempts: number;
  /** How a retry is made: a copy re-published to the topic, or a negative acknowledgement. */
  retryBy: 'republish' | 'nack';
  /** Whether a dead-letter destination exists. */
  deadLetter: boolean;
  /** Epoch ms used for failed_at. */
  now: number;
}

/** A message to write before the original may be acknowledged. */
export interface OutboundCopy {
  data: Buffer;
  properties: Record<string, string>;
}

/** What the I/O layer must do with the original message. */
export type Settlement =
  | { action: 'ack'; warning?: string }
  | { action: 'nack'; why: string }
  | { action: 'retry'; copy: OutboundCopy; attempt: number }
  | { action: 'dead-letter'; record: OutboundCopy; reason: 'failed' | 'unknown_urn' | 'poison' }
  /** Exhausted without a dead-letter destination: acknowledged, dropped and logged. */
  | { action: 'drop'; warning: string };
