/**
 * Partitioned topics: a partitioned topic `orders` is stored as `orders-partition-0` … `orders-partition-N-1`.
 * Both clients report the partition a message came from in its topic name (the native client does so itself,
 * the WebSocket client reads it from the message id), so the partition is read from that one place.
 */
const PARTITION_SUFFIX = /-partition-(\d+)$/;

/** The partition index in a topic name, -1 when the name is not one partition of a partitioned topic. */
export function partitionOf(topicName: string): number {
  const match = PARTITION_SUFFIX.exec(topicName);
  return match ? Number(match[1]) : -1;
}

/** The partitioned topic a partition belongs to (`…/orders-partition-2` → `…/orders`); other names as given. */
export function logicalTopicName(topicName: string): string {
  return topicName.replace(PARTITION_SUFFIX, '');
}

/** The name of one partition of `topicName`, as the broker and the native client write it. */
export function partitionTopicName(topicName: string, partition: number): string {
  return partition >= 0 && partitionOf(topicName) < 0 ? `${topicName}-partition-${partition}` : topicName;
}
