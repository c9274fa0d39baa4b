/** What to log about one consumer's connection after a status poll (pure). */
export type ConnectionChange =
  { kind: 'down'; topic: string } | { kind: 'up'; topic: string; downForMs: number } | null;

/**
 * Remembers, per topic, since when a consumer is disconnected, so that each outage is reported exactly twice:
 * once when it starts and once when it ends, with how long it lasted.
 */
export class ConnectionWatch {
  private readonly downSince = new Map<string, number>();

  observe(topic: string, connected: boolean, now: number): ConnectionChange {
    const since = this.downSince.get(topic);
    if (!connected) {
      if (since !== undefined) return null;
      this.downSince.set(topic, now);
      return { kind: 'down', topic };
    }
    if (since === undefined) return null;
    this.downSince.delete(topic);
    return { kind: 'up', topic, downForMs: now - since };
  }
}
