import type { ScaleRecord, ScaleTick } from '../../test/support/scale/records.js';

export interface ScaleInstance<R extends { t: string } = ScaleRecord> {
  name: string;
  records: R[];
  errors: string[];
  pid: number;
  deliveries(): Exclude<R, { t: 'ready' }>[];
  kill(): Promise<number | string>;
  stop(): Promise<number | string>;
}
export interface ScaleSummary {
  published: number;
  handledPerInstance: Record<string, number>;
  partitionsPerInstance: Record<string, number[]>;
  lost: number;
  duplicates: number;
  orderViolations: number;
  retried: number;
  retriesOnSameInstance: number;
  retriesBehindLaterSeqs: number;
  topics: string[];
  queues: string[];
}
export declare function createPartitionedTopic(webUrl: string, topic: string, partitions: number): Promise<void>;
export declare function deletePartitionedTopic(webUrl: string, topic: string): Promise<void>;
export declare function startInstance(
  name: string,
  env: Record<string, string>,
  timeoutMs?: number,
): Promise<ScaleInstance>;
/** Starts another instance program (a path) that reports its own records, with a `ready` one once listening. */
export declare function startInstance<R extends { t: string }>(
  name: string,
  env: Record<string, string>,
  timeoutMs: number | undefined,
  app: string,
): Promise<ScaleInstance<R>>;
export declare function startInstances(count: number, env: Record<string, string>): Promise<ScaleInstance[]>;
export declare function ticks(keys: number, perKey: number): ScaleTick[];
export declare function analyse(instances: ScaleInstance[], published: ScaleTick[]): ScaleSummary;
export declare function describeRun(label: string, summary: ScaleSummary): string;
