import type { PulsarMessage, PulsarProducer, PulsarProducerMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';

/** A copy that keeps the record's partition and ordering keys, so a keyed topic keeps it with its siblings. */
export function keyed(message: PulsarMessage, copy: PulsarProducerMessage): PulsarProducerMessage {
  const partitionKey = message.getPartitionKey();
  if (partitionKey) copy.partitionKey = partitionKey;
  const orderingKey = message.getOrderingKey?.();
  if (orderingKey) copy.orderingKey = orderingKey;
  return copy;
}

/**
 * Re-publishes a DLQ record at the end of the DLQ, byte for byte with its properties and keys; resolves to the
 * copy's message id. The caller acknowledges the original only after this succeeded.
 */
export async function putBack(producer: Promise<PulsarProducer>, message: PulsarMessage): Promise<string> {
  // A plain object: the raw native client returns an Array carrying the pairs as named members.
  const properties: Record<string, string> = { ...message.getProperties() };
  const id = await (await producer).send(keyed(message, { data: message.getData(), properties }));
  if (id === null) throw new Error('the broker returned no message id');
  return messageIdText(id);
}

/** One producer for the put-back copies of a run, created on first use (batching off: one entry per record). */
export function lazyProducer(create: () => Promise<PulsarProducer>): {
  get(): Promise<PulsarProducer>;
  close(): Promise<void>;
} {
  let producer: Promise<PulsarProducer> | undefined;
  return {
    get: () => (producer ??= create()),
    close: async () => {
      if (producer) await (await producer.catch(() => null))?.close().catch(() => undefined);
    },
  };
}
