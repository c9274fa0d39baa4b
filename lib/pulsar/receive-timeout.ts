/**
 * The native addon's rejection of a `receive(timeoutMs)` that found no message. The addon gives no code or type
 * for it, so this exact text is its only form; the WebSocket client and the testing kit also set `code`.
 */
const NATIVE_RECEIVE_TIMEOUT = 'Failed to receive message: TimeOut';

/**
 * True when a receive rejected because no message came in time (the normal idle answer of a receive loop), as
 * opposed to a failure worth reporting: the client's `TimeOut` code, or the native addon's own rejection.
 */
export function isReceiveTimeout(error: unknown): boolean {
  // Read by shape, not `instanceof Error`: the addon's errors come from the main realm, which a test runner's
  // sandbox (or another copy of the library) does not share.
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'TimeOut' || message === NATIVE_RECEIVE_TIMEOUT;
}
