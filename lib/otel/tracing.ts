// OpenTelemetry support. `@opentelemetry/api` is an optional peer: it is imported lazily once (cached), and when
// it is not installed every function here does nothing. Only types are imported statically (erased at build).
import type * as OtelApi from '@opentelemetry/api';
import type { Envelope } from '../envelope/index.js';
import { formatTraceParent, otelTraceIdOf, parentSpanIdOf, parseTraceParent, uuidOfOtelTraceId } from './trace-id.js';
import { errorText } from '../envelope/error-text.js';

export type OpenTelemetryApi = typeof OtelApi;

export const INSTRUMENTATION_NAME = '@babelqueue/nestjs-pulsar';
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

let loading: Promise<OpenTelemetryApi | null> | undefined;
let loaded: OpenTelemetryApi | null = null;

/** Imports `@opentelemetry/api` once; null when it is not installed. */
export function loadOpenTelemetry(): Promise<OpenTelemetryApi | null> {
  loading ??= import('@opentelemetry/api').then(
    (imported: unknown) => {
      // Under CommonJS interop the named exports may sit on `default`.
      const module = imported as Partial<OpenTelemetryApi> & { default?: OpenTelemetryApi };
      const api =
        typeof module.trace?.getTracer === 'function' ? (module as OpenTelemetryApi) : (module.default ?? null);
      loaded = api && typeof api.trace?.getTracer === 'function' ? api : null;
      return loaded;
    },
    () => null,
  );
  return loading;
}

/** The API once loadOpenTelemetry() resolved (null before, or when it is not installed). */
export function openTelemetry(): OpenTelemetryApi | null {
  return loaded;
}

const probes = new WeakMap<OpenTelemetryApi, OtelApi.Context>();

/**
 * Whether a consumer span could be seen by anyone: a tracer provider is registered (an SDK), or a context manager
 * is (then the active context carries the message's trace into what the handler publishes). Without either, a
 * span is a no-op that still costs the trace-id derivation per message, so it is skipped. Asked per message (a few
 * property reads), as an SDK may be started after the application.
 */
export function tracingObserved(api: OpenTelemetryApi): boolean {
  const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & { getDelegate?(): object };
  if ((provider.getDelegate?.() ?? provider).constructor.name !== 'NoopTracerProvider') return true;
  let probe = probes.get(api);
  if (!probe) probes.set(api, (probe = api.ROOT_CONTEXT.setValue(api.createContextKey('babelqueue.probe'), true)));
  const context = probe;
  return api.context.with(context, () => api.context.active() === context);
}

/** A started producer span and what publish must add to the message. */
export interface PublishTrace {
  /** traceparent / tracestate (and whatever the global propagator writes). */
  headers: Record<string, string>;
  /** The span's trace id as a UUID, for the envelope `trace_id` when the caller gave none. */
  traceId: string | undefined;
  end(messageId: string | undefined, error?: unknown): void;
}

/**
 * Starts the PRODUCER span `publish <urn>` as a child of the active context. A given `trace_id` places it in the
 * trace derived from that id instead (as consumers without `traceparent` derive it), linked to the active span if
 * any, so the `traceparent` sent and the `trace_id` sent name one trace for every SDK. Undefined when OTel is absent or there
 * is neither an active trace nor a tracer provider (the span context is invalid: nothing is propagated).
 */
export function startPublishSpan(urn: string, topic: string, givenTraceId?: string): PublishTrace | undefined {
  const api = loaded;
  if (!api) return undefined;
  const tracer = api.trace.getTracer(INSTRUMENTATION_NAME);
  const active = api.context.active();
  const activeSpan = api.trace.getSpanContext(active);
  const hasActive = activeSpan !== undefined && api.trace.isSpanContextValid(activeSpan);
  const given = typeof givenTraceId === 'string' && givenTraceId.trim() !== '';
  // A given trace id always wins: the span goes into the trace derived from it, so `traceparent` and `trace_id`
  // name one trace on every path. An active span (the request being served) is kept as a link, not the parent.
  const parent = !given
    ? active
    : api.trace.setSpanContext(active, {
        traceId: otelTraceIdOf(givenTraceId),
        spanId: parentSpanIdOf(givenTraceId),
        traceFlags: api.TraceFlags.SAMPLED,
        isRemote: true,
      });
  const span = tracer.startSpan(
    `publish ${urn}`,
    {
      kind: api.SpanKind.PRODUCER,
      ...(given && hasActive && { links: [{ context: activeSpan }] }),
      // The contract's attributes (docs/contract.md#tracing): system babelqueue, the URN as the producer's destination; the Pulsar topic beside it.
      attributes: {
        'messaging.system': 'babelqueue',
        'messaging.operation': 'publish',
        'messaging.operation.type': 'send',
        'messaging.destination.name': urn,
        'messaging.babelqueue.urn': urn,
        'messaging.pulsar.topic': topic,
      },
    },
    parent,
  );
  const spanContext = span.spanContext();
  // Without a tracer provider the span only echoes the derived parent: nothing of ours to propagate.
  const echoesParent = parent !== active && spanContext.spanId === api.trace.getSpanContext(parent)?.spanId;
  if (!api.trace.isSpanContextValid(spanContext) || echoesParent) {
    span.end();
    return undefined;
  }
  const headers: Record<string, string> = {};
  api.propagation.inject(api.trace.setSpan(parent, span), headers);
  headers[TRACEPARENT] = formatTraceParent(spanContext);
  const state = spanContext.traceState?.serialize();
  if (state) headers[TRACESTATE] = state;
  else delete headers[TRACESTATE];
  return {
    headers,
    traceId: uuidOfOtelTraceId(spanContext.traceId),
    end(messageId, error) {
      if (messageId !== undefined) span.setAttribute('messaging.message.id', messageId);
      if (error !== undefined) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: errorText(error),
        });
      }
      span.end();
    },
  };
}

/**
 * The parent context of a consumer span: the `traceparent` property when valid, else what the global propagator
 * extracts, else a remote parent in the trace derived from the envelope's `trace_id` (as the other SDKs do).
 */
export function consumerParent(
  api: OpenTelemetryApi,
  properties: Record<string, string>,
  traceId: string | undefined,
): OtelApi.Context {
  const root = api.ROOT_CONTEXT;
  const parsed = parseTraceParent(properties[TRACEPARENT]);
  if (parsed) {
    const state = properties[TRACESTATE];
    return api.trace.setSpanContext(root, {
      ...parsed,
      isRemote: true,
      ...(state && typeof api.createTraceState === 'function' && { traceState: api.createTraceState(state) }),
    });
  }
  const extracted = api.propagation.extract(root, properties);
  const spanContext = api.trace.getSpanContext(extracted);
  if (spanContext && api.trace.isSpanContextValid(spanContext)) return extracted;
  if (typeof traceId !== 'string' || traceId.trim() === '') return root;
  return api.trace.setSpanContext(root, {
    traceId: otelTraceIdOf(traceId),
    spanId: parentSpanIdOf(traceId),
    traceFlags: api.TraceFlags.SAMPLED,
    isRemote: true,
  });
}

export interface ProcessSpanInput {
  urn: string;
  topic: string;
  envelope: Envelope;
  properties: Record<string, string>;
  pulsarMessageId: string;
}

/**
 * Runs `work` inside the CONSUMER span `process <urn>` (active for the handler), ending it with the outcome:
 * OK when `work` resolves, ERROR (with the exception recorded) when it rejects. Without OTel: just `work()`.
 */
export async function inProcessSpan<T>(input: ProcessSpanInput, work: () => Promise<T>): Promise<T> {
  const api = loaded;
  if (!api || !tracingObserved(api)) return work();
  const { urn, topic, envelope, properties } = input;
  const parent = consumerParent(api, properties, envelope.trace_id);
  const span = api.trace.getTracer(INSTRUMENTATION_NAME).startSpan(
    `process ${urn}`,
    {
      kind: api.SpanKind.CONSUMER,
      // The contract's attributes (docs/contract.md#tracing): system babelqueue, destination meta.queue (the topic when the envelope has none).
      attributes: {
        'messaging.system': 'babelqueue',
        'messaging.operation': 'process',
        'messaging.operation.type': 'process',
        'messaging.destination.name': envelope.meta?.queue ?? topic,
        'messaging.pulsar.topic': topic,
        'messaging.message.id': envelope.meta?.id ?? '',
        'messaging.message.conversation_id': envelope.trace_id,
        'messaging.babelqueue.urn': urn,
        'messaging.babelqueue.attempts': envelope.attempts,
        'messaging.pulsar.message_id': input.pulsarMessageId,
      },
    },
    parent,
  );
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), work);
    span.setStatus({ code: api.SpanStatusCode.OK });
    return result;
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorText(error) });
    throw error;
  } finally {
    span.end();
  }
}
