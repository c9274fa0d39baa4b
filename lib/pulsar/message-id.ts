import type { PulsarMessageId } from './client-types.js';

/**
 * A message id in the one text form this library writes in logs and events, whatever the client:
 * `(ledger,entry,partition,batchIndex)`, as the native client prints it (the WebSocket client's `describe()`).
 */
export function messageIdText(id: PulsarMessageId): string {
  const describe = (id as { describe?: unknown }).describe;
  return typeof describe === 'function' ? String(describe.call(id)) : id.toString();
}
