import type { Attributes, Counter, Histogram, UpDownCounter } from '@opentelemetry/api';
import type { SettledEvent } from '../consumer/index.js';
import { INSTRUMENTATION_NAME, openTelemetry } from './tracing.js';

/**
 * The consumer's OpenTelemetry metrics (only when `@opentelemetry/api` is installed; without a MeterProvider the
 * instruments are no-ops). Attributes: `messaging.destination.name` (topic), `messaging.babelqueue.urn` and, where
 * there is one, `outcome`.
 */
export class ConsumerMetrics {
  private constructor(
    private readonly received: Counter,
    private readonly handled: Counter,
    private readonly retried: Counter,
    private readonly deadLettered: Counter,
    private readonly duration: Histogram,
    private readonly inFlight: UpDownCounter,
    private readonly unknownUrns: Counter,
  ) {}

  /**
   * Undefined when OpenTelemetry is not loaded, or no MeterProvider is registered: instruments taken from the API's
   * no-op provider stay no-ops for good, so recording into them would only cost time.
   */
  static create(): ConsumerMetrics | undefined {
    const api = openTelemetry();
    if (!api || api.metrics.getMeterProvider().constructor.name === 'NoopMeterProvider') return undefined;
    const meter = api.metrics.getMeter(INSTRUMENTATION_NAME);
    return new ConsumerMetrics(
      meter.createCounter('babelqueue.messages.received', {
        description: 'Deliveries settled by the consumer (every outcome, including poison and unknown URNs)',
      }),
      meter.createCounter('babelqueue.messages.handled', {
        description: 'Handler runs, by outcome (ok or error)',
      }),
      meter.createCounter('babelqueue.messages.retried', {
        description: 'Failed deliveries scheduled again (retry copy written, or negatively acknowledged)',
      }),
      meter.createCounter('babelqueue.messages.dead_lettered', {
        description: 'Records written to the dead-letter topic',
      }),
      meter.createHistogram('babelqueue.handler.duration', {
        description: 'Handler duration',
        unit: 's',
      }),
      meter.createUpDownCounter('babelqueue.messages.in_flight', {
        description: 'Handlers running now',
      }),
      meter.createCounter('babelqueue.messages.unknown_urn', {
        description: "Deliveries of a URN without a handler, by the subscription's strategy (attribute strategy)",
      }),
    );
  }

  /** Measures one handler run: in flight while it runs, then its duration and outcome. */
  async around<T>(topic: string, urn: string, work: () => Promise<T>): Promise<T> {
    const base: Attributes = { 'messaging.destination.name': topic, 'messaging.babelqueue.urn': urn };
    const started = performance.now();
    this.inFlight.add(1, base);
    let outcome = 'error';
    try {
      const result = await work();
      outcome = 'ok';
      return result;
    } finally {
      this.inFlight.add(-1, base);
      const attributes = { ...base, outcome };
      this.duration.record((performance.now() - started) / 1000, attributes);
      this.handled.add(1, attributes);
    }
  }

  /** Counts a settled delivery (the server's `settled` event). */
  settled(event: SettledEvent): void {
    const attributes: Attributes = {
      'messaging.destination.name': event.topic,
      'messaging.babelqueue.urn': event.urn ?? '',
      // A duplicate is acknowledged too; its own outcome lets a dashboard count what the inbox or a store skipped.
      outcome: event.duplicate ? 'duplicate' : event.action,
    };
    this.received.add(1, attributes);
    if (event.unknownUrn !== undefined) this.unknownUrns.add(1, { ...attributes, strategy: event.unknownUrn });
    if (event.action === 'retry' && event.written !== false) this.retried.add(1, attributes);
    // A release hands the message to another consumer: it is not a retry of a failure.
    else if (event.action === 'nack' && event.reason !== undefined && event.unknownUrn !== 'release')
      this.retried.add(1, attributes);
    else if (event.action === 'dead-letter' && event.written !== false) this.deadLettered.add(1, attributes);
  }
}
