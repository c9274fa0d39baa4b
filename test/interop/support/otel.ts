// OpenTelemetry in the Jest process for the interop tracing scenarios: the real SDK (a BasicTracerProvider with
// an in-memory exporter, an async-hooks context manager), registered only while one scenario runs, so that the
// other scenarios publish without a span and keep their UUID v4 trace ids.
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

export interface JestTracing {
  tracer: Tracer;
  /** Finished spans, by name when one is given. */
  spans(name?: string): ReadableSpan[];
}

/** Runs `body` with a tracer provider and context manager registered globally, then unregisters both. */
export async function withTracing<T>(body: (tracing: JestTracing) => Promise<T>): Promise<T> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  // No global propagator on purpose: the library writes and reads traceparent itself.
  const registered = trace.setGlobalTracerProvider(provider) && context.setGlobalContextManager(contextManager);
  try {
    if (!registered) throw new Error('another OpenTelemetry tracer provider or context manager is registered');
    return await body({
      tracer: trace.getTracer('babelqueue-interop'),
      spans: (name) => exporter.getFinishedSpans().filter((span) => name === undefined || span.name === name),
    });
  } finally {
    trace.disable();
    context.disable();
    await provider.shutdown();
  }
}
