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
