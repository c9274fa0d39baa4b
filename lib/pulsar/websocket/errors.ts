/**
 * Errors raised by the WebSocket client. Every failure carries a machine-readable `code`, the fully
 * qualified `topic` it concerns (when there is one) and, where relevant, the HTTP `status` of a rejected
 * handshake, the broker's own error text (`brokerMessage`) and the underlying `cause`.
 */

export type PulsarWebSocketErrorCode =
  /** TCP/TLS/DNS failure before any HTTP response (e.g. ECONNREFUSED). */
  | 'ConnectError'
  /** The broker answered the WebSocket upgrade with an HTTP error (see `status`). */
  | 'HandshakeRejected'
  /** The handshake did not finish within `operationTimeoutMs`. */
  | 'HandshakeTimeout'
  /** An established socket was lost (see `closeCode`). */
  | 'ConnectionClosed'
  /** The broker answered a send with an error ack (`result !== 'ok'`). */
  | 'SendError'
  /** No ack arrived within `sendTimeoutMs`. */
  | 'SendTimeout'
  /** The encoded frame exceeds `maxFrameBytes` (the broker would drop the whole socket). */
  | 'MessageTooBig'
  /** The producer/consumer/client was closed. */
  | 'AlreadyClosed'
  /** receive(timeout) expired. Spelled like the native client. */
  | 'TimeOut'
  /** Unsubscribe was refused (e.g. other consumers are still attached). */
  | 'UnsubscribeFailed'
  | 'InvalidTopic'
  | 'InvalidArgument';

export interface PulsarWebSocketErrorDetails {
  code: PulsarWebSocketErrorCode;
  topic?: string;
  status?: number;
  closeCode?: number;
  brokerMessage?: string;
  cause?: unknown;
}

export class PulsarWebSocketError extends Error {
  override readonly name = 'PulsarWebSocketError';
  readonly code: PulsarWebSocketErrorCode;
  readonly topic?: string;
  /** HTTP status of a rejected handshake. */
  readonly status?: number;
  /** WebSocket close code of a lost connection. */
  readonly closeCode?: number;
  /** The broker's own error text, unmodified (HTML entities decoded). */
  readonly brokerMessage?: string;

  constructor(message: string, details: PulsarWebSocketErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    if (details.topic !== undefined) this.topic = details.topic;
    if (details.status !== undefined) this.status = details.status;
    if (details.closeCode !== undefined) this.closeCode = details.closeCode;
    if (details.brokerMessage !== undefined) this.brokerMessage = details.brokerMessage;
  }
}

export function isPulsarWebSocketError(err: unknown): err is PulsarWebSocketError {
  return err instanceof PulsarWebSocketError;
}

export function describeCause(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
