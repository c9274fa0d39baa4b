// Counts what a chaos scenario sent and what became of it, by meta.id, and prints one summary line.
export class Ledger {
  private readonly sent = new Set<string>();
  private readonly handled = new Map<string, number>();
  private readonly deadLettered = new Set<string>();
  /** Messages with no id (hostile bodies) are counted by a key the scenario chooses. */
  readonly other = new Set<string>();

  constructor(private readonly scenario: string) {}

  markSent(id: string): void {
    this.sent.add(id);
  }
  markHandled(id: string): void {
    this.handled.set(id, (this.handled.get(id) ?? 0) + 1);
  }
  markDeadLettered(id: string): void {
    this.deadLettered.add(id);
  }

  /** Sent messages that reached no terminal outcome (neither handled nor dead-lettered). */
  lost(): string[] {
    return [...this.sent].filter((id) => !this.handled.has(id) && !this.deadLettered.has(id));
  }

  settledCount(): number {
    return [...this.sent].filter((id) => this.handled.has(id) || this.deadLettered.has(id)).length;
  }

  summary(): { sent: number; handled: number; duplicates: number; deadLettered: number; lost: number } {
    let duplicates = 0;
    for (const count of this.handled.values()) duplicates += count - 1;
    return {
      sent: this.sent.size,
      handled: this.handled.size,
      duplicates,
      deadLettered: this.deadLettered.size,
      lost: this.lost().length,
    };
  }

  print(): void {
    const s = this.summary();
    console.log(
      `[chaos] ${this.scenario}: sent ${s.sent} / handled ${s.handled} / duplicates ${s.duplicates} / ` +
        `dead-lettered ${s.deadLettered} / lost ${s.lost}`,
    );
  }
}
