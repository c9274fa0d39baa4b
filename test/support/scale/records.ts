// What a scale-out instance (instance.ts) reports, one JSON object per stdout line.

export const SCALE_URN = 'urn:babel:scale:tick';

/** The payload of every message of a scale-out run: per key, seq counts up from 1 in publish order. */
export interface ScaleTick {
  key: string;
  seq: number;
}

export interface ScaleDelivery {
  t: 'handled' | 'failed';
  instance: string;
  /** Wall-clock microseconds. */
  at: number;
  key: string;
  seq: number;
  /** BabelContext.getAttempts(): 0 on a first delivery. */
  attempt: number;
  /** BabelContext.getPartition(). */
  partition: number;
  partitionKey: string;
  /** BabelContext.getTopic(). */
  topic: string;
  /** meta.queue of the envelope. */
  queue: string;
}

export type ScaleRecord = ScaleDelivery | { t: 'ready'; instance: string; at: number };

/** The URN of the every-second schedule of the multi-instance schedule run (schedule-instance.ts). */
export const SCHEDULE_URN = 'urn:babel:scale:every-second';

/** One delivery of the every-second schedule, as a schedule instance reports it. */
export interface ScheduleDelivery {
  t: 'handled';
  instance: string;
  /** Wall-clock ms when the handler ran. */
  at: number;
  /** The broker's publish time of the message, ms. */
  publishedAt: number;
  /** bq-schedule-tick: the tick the message fired for (ISO 8601). */
  tick: string;
  /** meta.id of the envelope: a redelivery carries the same one. */
  messageId: string;
  attempt: number;
}

export type ScheduleRecord = ScheduleDelivery | { t: 'ready'; instance: string; at: number };
