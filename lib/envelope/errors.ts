/** Base class of every error this library throws on purpose. */
export class BabelQueueError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BabelQueueError';
  }
}

/** A message that is not a conformant envelope (poison): the message says which rule failed. */
export class InvalidEnvelopeError extends BabelQueueError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InvalidEnvelopeError';
  }
}

/** No handler is registered for the message's URN. */
export class UnknownUrnError extends BabelQueueError {
  readonly urn: string;

  constructor(urn: string, message?: string) {
    super(message ?? `no handler is registered for URN ${JSON.stringify(urn)}`);
    this.name = 'UnknownUrnError';
    this.urn = urn;
  }
}

/** The `bq-schema-version` property gate rejected the message before its body was decoded. */
export class SchemaVersionRejectedError extends BabelQueueError {
  readonly received: string;

  constructor(received: string) {
    // JSON.stringify makes whitespace and invisible characters (U+00A0, U+FEFF…) visible.
    super(
      `bq-schema-version ${JSON.stringify(received)} is not a supported schema version (expected "1"); the body was not decoded`,
    );
    this.name = 'SchemaVersionRejectedError';
    this.received = received;
  }
}

/**
 * Thrown by a handler (or a pipe or guard) to say that retrying cannot help — invalid data, a permanent
 * refusal. The message goes to the dead-letter topic at once, with this error as its cause, instead of
 * being retried up to `maxAttempts` (without a dead-letter topic it is acknowledged, dropped and logged).
 */
export class BabelNonRetriableError extends BabelQueueError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BabelNonRetriableError';
  }
}
