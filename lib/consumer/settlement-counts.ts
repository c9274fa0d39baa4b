// What one consumer settled since it opened, for `server.describe()`: a reader (the dashboard) turns two readings
// into rates. Plain counters, no OpenTelemetry needed.
import type { SettledEvent } from './processor-context.js';

/** Whether a settled delivery counts as handled, as failed, or as neither (pure). */
export function settlementKind(event: Pick<SettledEvent, 'action' | 'unknownUrn'>): 'handled' | 'failed' | null {
  switch (event.action) {
    case 'ack':
      return 'handled';
    case 'nack':
      // A release hands the message to an instance that knows its URN: nothing failed.
      return event.unknownUrn === 'release' ? null : 'failed';
    case 'retry':
    case 'dead-letter':
    case 'block':
    case 'drop':
    case 'ack-failed':
      return 'failed';
    default:
      return null;
  }
}

export class SettlementCounts {
  /** Deliveries acknowledged: handled, or needing no handler (a duplicate, an unknown URN deleted). */
  handled = 0;
  /** Deliveries that failed: retried, dead-lettered, negatively acknowledged, dropped, or not acknowledged. */
  failed = 0;

  count(event: SettledEvent): void {
    const kind = settlementKind(event);
    if (kind !== null) this[kind] += 1;
  }
}
