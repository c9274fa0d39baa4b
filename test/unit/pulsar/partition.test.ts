// Partition names (lib/pulsar/topic-name.ts) and the WebSocket message's topic name on a partitioned topic.
import {
  logicalTopicName,
  partitionOf,
  partitionTopicName,
  PulsarWebSocketMessage,
} from '../../../lib/pulsar/index.js';

/** base64 of a protobuf MessageIdData with ledger 1344, entry 0 and the given partition. */
const wireId = (partition: number): string =>
  Buffer.from([0x08, 0xc0, 0x0a, 0x10, 0x00, 0x18, partition]).toString('base64');

describe('partition names', () => {
  it('reads the partition from a partition topic name, -1 otherwise', () => {
    expect(partitionOf('persistent://public/default/orders-partition-3')).toBe(3);
    expect(partitionOf('orders-partition-12')).toBe(12);
    expect(partitionOf('persistent://public/default/orders')).toBe(-1);
    expect(partitionOf('orders.dlq')).toBe(-1);
  });

  it('maps a partition to its logical topic and back', () => {
    expect(logicalTopicName('persistent://public/default/orders-partition-2')).toBe(
      'persistent://public/default/orders',
    );
    expect(logicalTopicName('orders')).toBe('orders');
    expect(partitionTopicName('persistent://public/default/orders', 2)).toBe(
      'persistent://public/default/orders-partition-2',
    );
    expect(partitionTopicName('persistent://public/default/orders', -1)).toBe('persistent://public/default/orders');
    // A consumer of one partition already names it.
    expect(partitionTopicName('orders-partition-2', 2)).toBe('orders-partition-2');
  });

  it('gives a WebSocket message the partition topic name the native client reports', () => {
    const topic = 'persistent://public/default/orders';
    const onPartition = new PulsarWebSocketMessage({ messageId: wireId(1), payload: '' }, topic, 0);
    expect(onPartition.getTopicName()).toBe(`${topic}-partition-1`);
    const plain = new PulsarWebSocketMessage(
      { messageId: Buffer.from([0x08, 0x01, 0x10, 0x02]).toString('base64'), payload: '' },
      topic,
      0,
    );
    expect(plain.getTopicName()).toBe(topic);
  });
});
