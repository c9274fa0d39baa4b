import { errorMessage, type Envelope } from '../envelope/index.js';
import type { PulsarMessage } from '../pulsar/client-types.js';
import { errorText } from '../envelope/error-text.js';

/** A dead-letter or poison record as it was written to the dead-letter topic. */
export interface DeadLetterWrite {
  reason: 'failed' | 'unknown_urn' | 'poison';
  topic: string;
  data: Buffer;
  properties: Record<string, string>;
}

/**
 * Callbacks around settlement. None of them can stop or crash the consumer: whatever they throw is
 * caught and logged, except `onUnknownUrn`, whose failure counts as an `unknown_urn` failure (docs/contract.md#settlement).
 */
export interface BabelQueueHooks {
  /** A message could not be handled: gate rejection (empty envelope), poison, unknown URN, handler or write failure. */
  onError?(error: Error, envelope: Envelope | Record<string, never>, message: PulsarMessage): void | Promise<void>;
  /** No handler for the URN. When set, it runs and the message is acknowledged. */
  onUnknownUrn?(envelope: Envelope, message: PulsarMessage): void | Promise<void>;
  /** bq-job and the body URN differ; the property routed the message. */
  onRoutingMismatch?(
    propertyUrn: string,
    bodyUrn: string,
    envelope: Envelope,
    message: PulsarMessage,
  ): void | Promise<void>;
  /** A record reached the dead-letter topic (called after the write succeeded). */
  onDeadLetter?(record: DeadLetterWrite, message: PulsarMessage): void | Promise<void>;
}

/** The logging surface the consumer needs; Nest's `Logger` satisfies it. */
export interface ConsumerLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string, stack?: string): void;
  debug?(message: string): void;
}

/** Runs an observer hook so that neither a throw nor a rejected promise escapes. */
export function callHookSafely(logger: ConsumerLogger, name: string, run: () => unknown): void {
  const report = (error: unknown) =>
    (name === 'onRoutingMismatch' ? (logger.debug ?? logger.warn) : logger.error).call(
      logger,
      `hook ${name} threw (ignored): ${errorText(error)}`,
    );
  try {
    const result = run();
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(undefined, report);
    }
  } catch (error) {
    report(error);
  }
}

/**
 * An Error for hooks and logs that must receive one. A thrown non-Error keeps its message as a dead-letter record
 * reads it (empty for `undefined`/`null`) and the value itself as `cause`, so nothing about it is lost.
 */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  const error = new Error(errorMessage(value) ?? '', { cause: value });
  error.name = 'NonErrorThrown';
  return error;
}
