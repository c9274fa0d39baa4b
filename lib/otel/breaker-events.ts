// OpenTelemetry signals of a subscription's circuit breaker (docs/retries.md#circuit-breaker): each change of state is
// an event on a short span of its own (`babelqueue.circuit_breaker`) and counts in
// `babelqueue.circuit_breaker.changes`. Without @opentelemetry/api (or without an SDK) nothing is recorded.
import type { Counter } from '@opentelemetry/api';
import { INSTRUMENTATION_NAME, openTelemetry, tracingObserved } from './tracing.js';

export interface BreakerChangeFacts {
  topic: string;
  subscription: string;
  from: string;
  to: string;
  why: string;
}

let changes: Counter | undefined;

/** Records one change of a breaker's state. */
export function recordBreakerChange(facts: BreakerChangeFacts): void {
  const api = openTelemetry();
  if (!api) return;
  const attributes = {
    'messaging.destination.name': facts.topic,
    'messaging.destination.subscription.name': facts.subscription,
    'babelqueue.circuit_breaker.from': facts.from,
    'babelqueue.circuit_breaker.to': facts.to,
  };
  changes ??= api.metrics.getMeter(INSTRUMENTATION_NAME).createCounter('babelqueue.circuit_breaker.changes', {
    description: "Changes of a subscription's circuit breaker state (attributes from, to)",
  });
  changes.add(1, attributes);
  if (!tracingObserved(api)) return;
  const span = api.trace.getTracer(INSTRUMENTATION_NAME).startSpan('babelqueue.circuit_breaker', { attributes });
  span.addEvent(`babelqueue.circuit_breaker.${facts.to}`, {
    ...attributes,
    'babelqueue.circuit_breaker.why': facts.why,
  });
  span.end();
}
