/**
 * Pure-TypeScript Pulsar client over the broker's WebSocket API (`ws(s)://host:8080/ws/v2/...`), implementing
 * the structural `PulsarClientLike` interface with the native `pulsar-client` shape.
 *
 * Behaviour in brief (details on each class):
 * - Each producer/consumer owns one WebSocket. The first connect fails fast with a PulsarWebSocketError (code,
 *   topic, HTTP status and broker text). A socket lost later is reopened with capped exponential backoff
 *   (reconnect.initialDelayMs 100 → maxDelayMs 30000, ±20% jitter) until close().
 * - Producer: sends are pipelined and correlated by `context`; sends in flight when a socket drops are rejected
 *   (ConnectionClosed), sends made while reconnecting wait (bounded by sendTimeoutMs). Batching is off unless
 *   `batchingEnabled: true` (the broker's WebSocket default; the native client defaults to on).
 * - Consumer: push mode; the broker pushes at most receiverQueueSize (≤ 1000, 0 → 1) messages not yet acked or
 *   nacked on the socket, which bounds the client's buffer. Pending receive() calls survive reconnects. Acking a
 *   message from a dropped socket is a safe no-op applied to its redelivered copy.
 * - Every close() is idempotent; afterwards operations reject with code 'AlreadyClosed'. No timer or socket
 *   outlives close().
 */
export { PulsarWebSocketClient } from './client.js';
export type { PulsarWebSocketClientOptions, TokenSupplier } from './options.js';
export type { ReconnectOptions } from './socket.js';
export { PulsarWebSocketProducer, type PulsarWebSocketProducerMessage } from './producer.js';
export { PulsarWebSocketConsumer, type PulsarWebSocketConsumerStats } from './consumer.js';
export { PulsarWebSocketMessage } from './message.js';
export { PulsarWebSocketMessageId } from './message-id.js';
export {
  PulsarWebSocketError,
  isPulsarWebSocketError,
  type PulsarWebSocketErrorCode,
  type PulsarWebSocketErrorDetails,
} from './errors.js';
export { normalizeTopic, parseTopic, type TopicName, type TopicDomain } from '../topic-name.js';
