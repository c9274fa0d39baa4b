export { PulsarWebSocketClient } from './client.js';
export type { PulsarWebSocketClientOptions } from './options.js';
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
export { normalizeTopic, parseTopic, type TopicName, type TopicDomain } from './topic.js';
