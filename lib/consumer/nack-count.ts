/** How many negatively acknowledged messages a consumer remembers (the oldest are forgotten first). */
const REMEMBERED = 10_000;

/**
 * The deliveries of each message this consumer negatively acknowledged, by message id. Pulsar's redelivery count
 * lives in the broker's memory and starts again at 0 when the broker restarts or the topic is unloaded (moves to
 * another broker), so with `retry: 'nack'` a cap counted on it alone could be reached late, or never under
 * repeated restarts. The consumer counts too, and the larger of the two counts: the cap then holds across broker
 * restarts and unloads for as long as this process runs (docs/retries.md#retry-nack-across-broker-restarts).
 */
export class NackCount {
  private readonly deliveries = new Map<string, number>();

  constructor(private readonly remembered = REMEMBERED) {}

  /** The earlier deliveries of the message that this consumer negatively acknowledged. */
  before(messageId: string): number {
    return this.deliveries.get(messageId) ?? 0;
  }

  /** The message was negatively acknowledged: its next delivery is one more. */
  nacked(messageId: string): void {
    const count = this.before(messageId) + 1;
    // Re-inserted so that the map's order is the order of the last nack: the oldest go first.
    this.deliveries.delete(messageId);
    this.deliveries.set(messageId, count);
    if (this.deliveries.size > this.remembered) this.deliveries.delete(this.deliveries.keys().next().value!);
  }

  /** The message was settled for good (acknowledged, dead-lettered, dropped). */
  settled(messageId: string): void {
    this.deliveries.delete(messageId);
  }

  get size(): number {
    return this.deliveries.size;
  }
}
