import type { Counter } from '@opentelemetry/api';
import { INSTRUMENTATION_NAME, openTelemetry } from './tracing.js';

/**
 * The outbox relay's OpenTelemetry counters (only when `@opentelemetry/api` is loaded and a MeterProvider is
 * registered). Attribute `messaging.destination.name` (the row's topic); `failed` also has `cause` (`broker` or
 * `row`).
 */
export class OutboxMetrics {
  private constructor(
    private readonly publishedRows: Counter,
    private readonly failedRows: Counter,
    private readonly parkedRows: Counter,
  ) {}

  /** Undefined without OpenTelemetry or without a MeterProvider (its instruments would stay no-ops). */
  static create(): OutboxMetrics | undefined {
    const api = openTelemetry();
    if (!api || api.metrics.getMeterProvider().constructor.name === 'NoopMeterProvider') return undefined;
    const meter = api.metrics.getMeter(INSTRUMENTATION_NAME);
    return new OutboxMetrics(
      meter.createCounter('babelqueue.outbox.published', { description: 'Outbox rows the broker stored' }),
      meter.createCounter('babelqueue.outbox.failed', {
        description: 'Failed outbox publishes, by cause (broker: tried again; row: counts towards parking)',
      }),
      meter.createCounter('babelqueue.outbox.parked', { description: 'Outbox rows parked (no longer tried)' }),
    );
  }

  published(topic: string, count = 1): void {
    this.publishedRows.add(count, { 'messaging.destination.name': topic });
  }

  failed(topic: string, cause: 'broker' | 'row'): void {
    this.failedRows.add(1, { 'messaging.destination.name': topic, cause });
  }

  parked(topic: string): void {
    this.parkedRows.add(1, { 'messaging.destination.name': topic });
  }
}
