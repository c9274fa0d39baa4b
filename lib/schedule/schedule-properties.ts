/**
 * The Pulsar properties a fired message carries besides the contract's `bq-*` six (additive, docs/contract.md):
 * any SDK that reads properties can tell a scheduled message and its tick without decoding the body.
 */
export const SCHEDULE_PROPERTIES = {
  /** The id of the schedule that fired the message. */
  id: 'bq-schedule-id',
  /** The tick it fired for, ISO 8601 in UTC with milliseconds (`2026-12-03T17:00:00.000Z`). */
  tick: 'bq-schedule-tick',
} as const;

/** The properties of one firing. */
export function scheduleProperties(scheduleId: string, tick: Date): Record<string, string> {
  return { [SCHEDULE_PROPERTIES.id]: scheduleId, [SCHEDULE_PROPERTIES.tick]: tick.toISOString() };
}
