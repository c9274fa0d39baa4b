/** How many acks of messages from a dropped socket are remembered until their redelivery shows up. */
const LATE_ACK_CAPACITY = 1000;

/** Acks of messages from a dropped socket, applied when their redelivered copy shows up; the oldest go first. */
export class LateAcks {
  private readonly ids = new Set<string>();

  remember(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    if (this.ids.size > LATE_ACK_CAPACITY) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }

  /** True when an ack of `id` was remembered (it is forgotten then). */
  take(id: string): boolean {
    return this.ids.delete(id);
  }

  clear(): void {
    this.ids.clear();
  }
}
