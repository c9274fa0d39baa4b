import type { Counter, Histogram } from '@opentelemetry/api';
import { INSTRUMENTATION_NAME, openTelemetry } from './tracing.js';

/**
 * The schedule dispatcher's OpenTelemetry instruments (only when `@opentelemetry/api` is loaded and a MeterProvider
 * is registered): messages fired into the outbox, and how late after their tick. Attribute
 * `messaging.destination.name` (the schedule's topic).
 */
export class ScheduleMetrics {
  private constructor(
    private readonly firedMessages: Counter,
    private readonly lateness: Histogram,
  ) {}

  /** Undefined without OpenTelemetry or without a MeterProvider (its instruments would stay no-ops). */
  static create(): ScheduleMetrics | undefined {
    const api = openTelemetry();
    if (!api || api.metrics.getMeterProvider().constructor.name === 'NoopMeterProvider') return undefined;
    const meter = api.metrics.getMeter(INSTRUMENTATION_NAME);
    return new ScheduleMetrics(
      meter.createCounter('babelqueue.schedule.fired', {
        description: 'Scheduled messages written to the outbox (one per tick fired)',
      }),
      meter.createHistogram('babelqueue.schedule.lateness', {
        description: 'How long after its tick a scheduled message was written to the outbox',
        unit: 'ms',
      }),
    );
  }

  fired(topic: string, lateMs: number): void {
    const attributes = { 'messaging.destination.name': topic };
    this.firedMessages.add(1, attributes);
    this.lateness.record(Math.max(0, lateMs), attributes);
  }
}
