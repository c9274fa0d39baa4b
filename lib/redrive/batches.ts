import type { PulsarConsumer, PulsarMessage } from '../pulsar/client-types.js';
import { messageIdText } from '../pulsar/message-id.js';
import { receiveOrIdle } from './read-dead-letters.js';

/** `(ledger,entry,partition)` of a record that is part of a Pulsar batch (batch index ≥ 0); null otherwise. */
export function batchEntryOf(message: PulsarMessage): string | null {
  const match = /^\((-?\d+),(-?\d+),(-?\d+),(-?\d+)\)$/.exec(messageIdText(message.getMessageId()));
  if (!match || Number(match[4]) < 0) return null;
  return `${match[1]},${match[2]},${match[3]}`;
}

/**
 * Pulsar acknowledges a batch as a whole unless the broker tracks batch indexes: acknowledging some records of a
 * batch and closing brings the whole batch back, the acknowledged ones too. So a run that acknowledged a record
 * of a batch must dispose of every record of that batch. This tracks, per batch, whether a record was
 * acknowledged and which read records were not.
 */
export class BatchTracker {
  private readonly entries = new Map<string, { acked: boolean; open: PulsarMessage[] }>();

  /** Notes a record read, and whether it was acknowledged. */
  note(message: PulsarMessage, acknowledged: boolean): void {
    const entry = batchEntryOf(message);
    if (entry === null) return;
    const state = this.entries.get(entry) ?? { acked: false, open: [] };
    if (acknowledged) state.acked = true;
    else state.open.push(message);
    this.entries.set(entry, state);
  }

  hasAcknowledged(entry: string): boolean {
    return this.entries.get(entry)?.acked === true;
  }

  /** Read records left unacknowledged in a batch of which a record was acknowledged. */
  leftovers(): PulsarMessage[] {
    return [...this.entries.values()].filter((state) => state.acked).flatMap((state) => state.open);
  }
}

/**
 * After a read stopped (at `max`, say) right after `last`: reads on while the records belong to the same batch,
 * so the rest of that batch can be disposed of too. The first record of another batch is left unacknowledged.
 */
export async function readRestOfBatch(
  consumer: PulsarConsumer,
  last: PulsarMessage | null,
  idleMs: number,
): Promise<PulsarMessage[]> {
  const entry = last ? batchEntryOf(last) : null;
  const rest: PulsarMessage[] = [];
  while (entry !== null) {
    const next = await receiveOrIdle(consumer, idleMs);
    if (!next || batchEntryOf(next) !== entry) break;
    rest.push(next);
  }
  return rest;
}
