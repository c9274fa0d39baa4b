// OpenTelemetry through the real broker with the real OTel SDK: publish -> process parent/child spans, the
// trace_id fallback without traceparent, trace headers kept on retry copies and dead-letter records, metrics, and
// the `telemetry` option switching tracing and metrics off (server, client, module-wide).
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  BabelContext,
  BabelHandler,
  BabelPulsarClient,
  BabelQueueModule,
  EnvelopeCodec,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { otelTraceIdOf, parentSpanIdOf, uuidOfOtelTraceId } from '../../../lib/otel/trace-id.js';
import { newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { quietLogger, startService, type RunningService } from '../../support/nest-app.js';
import { rootModule, startMicroservice } from '../module/support/apps.js';

jest.setTimeout(60_000);

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();
const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });

let client: PulsarClientLike;
let publisher: BabelPulsarClient;
let service: RunningService | null = null;
beforeAll(() => {
  // No global propagator on purpose: traceparent is written and read by the library itself.
  trace.setGlobalTracerProvider(tracerProvider);
  context.setGlobalContextManager(contextManager);
  metrics.setGlobalMeterProvider(meterProvider);
  client = newClient();
  publisher = new BabelPulsarClient({ client });
});
beforeEach(() => exporter.reset());
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await publisher.close();
  await client.close();
  trace.disable();
  context.disable();
  metrics.disable();
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
});

const URN = 'urn:babel:orders:created';
const spans = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name);

/** Spans named `name` about `topic` (publish and process spans both carry messaging.pulsar.topic). */
const spansOn = (name: string, topic: string): ReadableSpan[] =>
  spans(name).filter((span) => span.attributes['messaging.pulsar.topic'] === topic);

/** The sum of a counter (or up-down counter) for `topic`, and how many data points any babelqueue.* metric has. */
async function metricsFor(topic: string): Promise<{ sum(name: string, outcome?: string): number; points: number }> {
  const collected = await reader.collect();
  const points = collected.resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name.startsWith('babelqueue.'))
    .flatMap((metric) =>
      (metric.dataPoints as Array<{ value: unknown; attributes: Record<string, unknown> }>).map((point) => ({
        name: metric.descriptor.name,
        ...point,
      })),
    )
    .filter((point) => point.attributes['messaging.destination.name'] === topic);
  return {
    points: points.length,
    sum: (name, outcome) =>
      points
        .filter((point) => point.name === name && (outcome === undefined || point.attributes['outcome'] === outcome))
        .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : 0), 0),
  };
}

/** Publishes inside an active span `request`; resolves to the message id and the request's trace id. */
async function publishInSpan(from: BabelPulsarClient, topic: string): Promise<{ id: string; traceId: string }> {
  return trace.getTracer('test').startActiveSpan('request', async (request) => {
    try {
      return { id: await from.publish(URN, { n: 1 }, { topic }), traceId: request.spanContext().traceId };
    } finally {
      request.end();
    }
  });
}

interface Seen {
  id: string;
  traceId: string;
  properties: Record<string, string>;
  activeSpan: boolean;
}

/** A controller that records what each delivery looked like from inside the handler. */
function recordingController(seen: Seen[]) {
  @Controller()
  class Orders {
    @BabelHandler(URN)
    created(@Ctx() ctx: BabelContext) {
      seen.push({
        id: ctx.getEnvelope().meta.id,
        traceId: ctx.getTraceId(),
        properties: ctx.getProperties(),
        activeSpan: trace.getActiveSpan() !== undefined,
      });
    }
  }
  return Orders;
}

async function publishRaw(topic: string, traceId: string): Promise<void> {
  const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic, traceId });
  const producer = await client.createProducer({ topic });
  try {
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  } finally {
    await producer.close();
  }
}

describe('OpenTelemetry tracing (real broker, real OTel SDK)', () => {
  it('makes the consumer span a child of the producer span, across publish -> consume', async () => {
    const topic = uniqueTopic('otel-pc');
    const inHandler: Array<{ traceId: string; spanId: string; envelopeTraceId: string; traceparent?: string }> = [];
    @Controller()
    class Orders {
      @BabelHandler(URN)
      created(@Ctx() ctx: BabelContext) {
        const active = trace.getActiveSpan()!.spanContext();
        inHandler.push({
          traceId: active.traceId,
          spanId: active.spanId,
          envelopeTraceId: ctx.getTraceId(),
          traceparent: ctx.getProperties()['traceparent'],
        });
      }
    }
    service = await startService([Orders], { client, topics: topic });

    const tracer = trace.getTracer('test');
    const id = await tracer.startActiveSpan('request', async (request) => {
      try {
        return await publisher.publish(URN, { n: 1 }, { topic });
      } finally {
        request.end();
      }
    });
    await waitFor('the consumer span', () => spans(`process ${URN}`).length === 1);

    const [request] = spans('request');
    const [publish] = spans(`publish ${URN}`);
    const [process] = spans(`process ${URN}`);
    const traceId = request!.spanContext().traceId;
    expect(publish!.kind).toBe(SpanKind.PRODUCER);
    expect(publish!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId);
    expect(publish!.attributes).toMatchObject({
      'messaging.system': 'babelqueue',
      'messaging.destination.name': URN,
      'messaging.pulsar.topic': topic,
      'messaging.message.id': id,
    });
    expect(process!.kind).toBe(SpanKind.CONSUMER);
    expect(process!.spanContext().traceId).toBe(traceId);
    expect(process!.parentSpanContext?.spanId).toBe(publish!.spanContext().spanId);
    expect(process!.parentSpanContext?.isRemote).toBe(true);
    expect(process!.status.code).toBe(SpanStatusCode.OK);
    expect(process!.attributes).toMatchObject({
      'messaging.system': 'babelqueue',
      'messaging.operation': 'process',
      'messaging.destination.name': topic,
      'messaging.pulsar.topic': topic,
      'messaging.message.id': id,
      'messaging.babelqueue.urn': URN,
      'messaging.babelqueue.attempts': 0,
      'messaging.message.conversation_id': uuidOfOtelTraceId(traceId),
    });
    // The handler runs inside the consumer span; the envelope carries the producer's trace id as a UUID.
    expect(inHandler).toEqual([
      {
        traceId,
        spanId: process!.spanContext().spanId,
        envelopeTraceId: uuidOfOtelTraceId(traceId),
        traceparent: `00-${traceId}-${publish!.spanContext().spanId}-01`,
      },
    ]);
  });

  it('a trace id given inside an active span names the one trace (linked to the span); outside any span the publish span is a root span', async () => {
    const topic = uniqueTopic('otel-own');
    const seen: Array<{ traceId: string; traceparent: string | undefined }> = [];
    @Controller()
    class Orders {
      @BabelHandler(URN)
      created(@Ctx() ctx: BabelContext) {
        seen.push({ traceId: ctx.getTraceId(), traceparent: ctx.getProperties()['traceparent'] });
      }
    }
    service = await startService([Orders], { client, topics: topic });
    let requestSpan: { traceId: string; spanId: string } | undefined;
    await trace.getTracer('test').startActiveSpan('request', async (request) => {
      requestSpan = request.spanContext();
      await publisher.publish(URN, { n: 1 }, { topic, traceId: 'order-7' });
      request.end();
    });
    // Outside any span (a tracer provider is registered): the publish span starts a trace of its own.
    await publisher.publish(URN, { n: 2 }, { topic });
    await waitFor('two deliveries', () => seen.length === 2);
    expect(seen[0]!.traceId).toBe('order-7');
    // Inside an active span too, the given trace id wins: traceparent names the trace trace_id derives (one trace
    // for Node consumers, which follow traceparent, and for the other SDKs, which derive it from trace_id).
    expect(seen[0]!.traceparent).toMatch(new RegExp(`^00-${otelTraceIdOf('order-7')}-[0-9a-f]{16}-01$`));
    const inRequest = spansOn(`publish ${URN}`, topic).find(
      (span) => span.spanContext().traceId === otelTraceIdOf('order-7'),
    );
    expect(inRequest!.links.map((link) => link.context.spanId)).toEqual([requestSpan!.spanId]);
    const processed = await waitFor('the process span of the first message', () =>
      spansOn(`process ${URN}`, topic).find((span) => span.spanContext().traceId === otelTraceIdOf('order-7')),
    );
    expect(processed.parentSpanContext?.spanId).toBe(inRequest!.spanContext().spanId);
    const roots = spans(`publish ${URN}`).filter((span) => span.parentSpanContext === undefined);
    expect(roots).toHaveLength(1);
    const root = roots[0]!.spanContext();
    expect(seen[1]).toEqual({
      traceId: uuidOfOtelTraceId(root.traceId),
      traceparent: `00-${root.traceId}-${root.spanId}-01`,
    });
  });

  it('outside any span, a given trace id puts the publish span in the trace that id derives (as other SDKs read it)', async () => {
    const topic = uniqueTopic('otel-given');
    @Controller()
    class Orders {
      @BabelHandler(URN)
      created() {}
    }
    service = await startService([Orders], { client, topics: topic });
    await publisher.publish(URN, { n: 1 }, { topic, traceId: 'order-42' });
    await waitFor('the consumer span', () => spans(`process ${URN}`).length === 1);
    const [publish] = spans(`publish ${URN}`);
    const [process] = spans(`process ${URN}`);
    // The traceparent sent and the trace_id sent name one trace: a peer SDK that reads only trace_id joins it too.
    expect(publish!.spanContext().traceId).toBe(otelTraceIdOf('order-42'));
    expect(publish!.parentSpanContext?.spanId).toBe(parentSpanIdOf('order-42'));
    expect(process!.spanContext().traceId).toBe(otelTraceIdOf('order-42'));
    expect(process!.parentSpanContext?.spanId).toBe(publish!.spanContext().spanId);
  });

  it.each([
    ['a UUID, byte for byte', '0af76519-16cd-43dd-8448-eb211c80319c'],
    ['any other string, by SHA-256', 'order-42'],
  ])('without traceparent, falls back to the envelope trace_id (%s)', async (_name, traceId) => {
    const topic = uniqueTopic('otel-fb');
    @Controller()
    class Orders {
      @BabelHandler(URN)
      created() {}
    }
    service = await startService([Orders], { client, topics: topic });
    await publishRaw(topic, traceId);
    await waitFor('the consumer span', () => spans(`process ${URN}`).length === 1);
    const [process] = spans(`process ${URN}`);
    expect(process!.spanContext().traceId).toBe(otelTraceIdOf(traceId));
    expect(process!.parentSpanContext?.spanId).toBe(parentSpanIdOf(traceId));
    expect(process!.attributes['messaging.message.conversation_id']).toBe(traceId);
    if (traceId.includes('-') && traceId.length === 36)
      expect(process!.spanContext().traceId).toBe(traceId.replace(/-/g, ''));
  });

  it('keeps traceparent on retry copies and dead-letter records; failed runs end with an error status', async () => {
    const topic = uniqueTopic('otel-retry');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    const headers: Array<string | undefined> = [];
    @Controller()
    class Orders {
      @BabelHandler(URN)
      created(@Ctx() ctx: BabelContext) {
        headers.push(ctx.getProperties()['traceparent']);
        throw new Error('boom');
      }
    }
    service = await startService([Orders], { client, topics: topic, maxAttempts: 3 });
    await trace.getTracer('test').startActiveSpan('request', async (request) => {
      await publisher.publish(URN, { n: 1 }, { topic });
      request.end();
    });
    const [record] = await receiveN(dlq, 1);
    await dlq.acknowledge(record!);
    await dlq.close();
    await waitFor('three consumer spans', () => spans(`process ${URN}`).length === 3);

    const [publish] = spans(`publish ${URN}`);
    const traceparent = `00-${publish!.spanContext().traceId}-${publish!.spanContext().spanId}-01`;
    expect(headers).toEqual([traceparent, traceparent, traceparent]);
    expect(record!.getProperties()['traceparent']).toBe(traceparent);
    const processes = spans(`process ${URN}`);
    expect(processes.map((span) => span.parentSpanContext?.spanId)).toEqual(
      Array(3).fill(publish!.spanContext().spanId),
    );
    expect(processes.map((span) => span.attributes['messaging.babelqueue.attempts']).sort()).toEqual([0, 1, 2]);
    for (const span of processes) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
      expect(span.events.some((event) => event.name === 'exception')).toBe(true);
    }

    const collected = await reader.collect();
    const all: MetricData[] = collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const sum = (name: string, outcome?: string) =>
      all
        .filter((metric) => metric.descriptor.name === name)
        .flatMap((metric) => metric.dataPoints as Array<{ value: unknown; attributes: Record<string, unknown> }>)
        .filter(
          (point) =>
            point.attributes['messaging.destination.name'] === topic &&
            (outcome === undefined || point.attributes['outcome'] === outcome),
        )
        .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : 0), 0);
    expect(sum('babelqueue.messages.received')).toBe(3);
    expect(sum('babelqueue.messages.handled', 'error')).toBe(3);
    expect(sum('babelqueue.messages.retried')).toBe(2);
    expect(sum('babelqueue.messages.dead_lettered')).toBe(1);
    expect(sum('babelqueue.messages.in_flight')).toBe(0);
    const durations = all
      .filter((metric) => metric.descriptor.name === 'babelqueue.handler.duration')
      .flatMap(
        (metric) => metric.dataPoints as Array<{ value: { count: number }; attributes: Record<string, unknown> }>,
      )
      .filter((point) => point.attributes['messaging.destination.name'] === topic);
    expect(durations.reduce((total, point) => total + point.value.count, 0)).toBe(3);
    expect(durations[0]!.attributes).toMatchObject({ 'messaging.babelqueue.urn': URN, outcome: 'error' });
  });
});

describe('telemetry option: tracing and metrics switched off (real broker, real OTel SDK)', () => {
  it('server { tracing: false }: no consumer span and none active in the handler; metrics still counted', async () => {
    const topic = uniqueTopic('otel-notrace');
    const seen: Seen[] = [];
    service = await startService([recordingController(seen)], {
      client,
      topics: topic,
      telemetry: { tracing: false },
    });
    const { id } = await publishInSpan(publisher, topic);
    await waitFor('the delivery', () => seen.length === 1);
    await waitFor('the settlement', () => service!.settled.length === 1);
    expect(seen[0]).toMatchObject({ id, activeSpan: false });
    // The publisher still traces: its header arrives, the consumer just does not continue it.
    expect(seen[0]!.properties['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(spansOn(`publish ${URN}`, topic)).toHaveLength(1);
    expect(spansOn(`process ${URN}`, topic)).toHaveLength(0);
    const measured = await metricsFor(topic);
    expect(measured.sum('babelqueue.messages.received')).toBe(1);
    expect(measured.sum('babelqueue.messages.handled', 'ok')).toBe(1);
  });

  it('server { metrics: false }: the consumer span as usual, no metrics for its topic', async () => {
    const topic = uniqueTopic('otel-nometrics');
    const seen: Seen[] = [];
    service = await startService([recordingController(seen)], {
      client,
      topics: topic,
      telemetry: { metrics: false },
    });
    await publishInSpan(publisher, topic);
    await waitFor('the consumer span', () => spansOn(`process ${URN}`, topic).length === 1);
    await waitFor('the settlement', () => service!.settled.length === 1);
    expect(seen[0]!.activeSpan).toBe(true);
    expect((await metricsFor(topic)).points).toBe(0);
  });

  it('client { tracing: false }: no publish span, no trace headers, trace_id not taken from the active span', async () => {
    const topic = uniqueTopic('otel-nopub');
    const seen: Seen[] = [];
    service = await startService([recordingController(seen)], { client, topics: topic });
    const quiet = new BabelPulsarClient({ client, telemetry: { tracing: false } });
    try {
      const { id, traceId } = await publishInSpan(quiet, topic);
      await waitFor('the delivery', () => seen.length === 1);
      expect(spansOn(`publish ${URN}`, topic)).toHaveLength(0);
      expect(seen[0]!.id).toBe(id);
      expect(seen[0]!.properties).not.toHaveProperty('traceparent');
      expect(seen[0]!.properties).not.toHaveProperty('tracestate');
      expect(seen[0]!.traceId).not.toBe(uuidOfOtelTraceId(traceId));
      expect(seen[0]!.traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // The consumer (tracing on) falls back to the trace derived from trace_id.
      await waitFor('the consumer span', () => spansOn(`process ${URN}`, topic).length === 1);
      expect(spansOn(`process ${URN}`, topic)[0]!.spanContext().traceId).toBe(otelTraceIdOf(seen[0]!.traceId));
    } finally {
      await quiet.close();
    }
  });

  it('BabelQueueModule { telemetry: false }: neither its publisher nor its server traces or measures', async () => {
    const topic = uniqueTopic('otel-module-off');
    const seen: Seen[] = [];
    const { app, settled } = await startMicroservice(
      rootModule({
        imports: [BabelQueueModule.forRoot({ client, topic, telemetry: false, logger: quietLogger })],
        controllers: [recordingController(seen)],
      }),
    );
    try {
      const { traceId } = await publishInSpan(app.get(BabelPulsarClient), topic);
      await waitFor('the delivery', () => seen.length === 1);
      await waitFor('the settlement', () => settled.length === 1);
      expect(seen[0]!.activeSpan).toBe(false);
      expect(seen[0]!.properties).not.toHaveProperty('traceparent');
      expect(seen[0]!.traceId).not.toBe(uuidOfOtelTraceId(traceId));
      expect(spansOn(`publish ${URN}`, topic)).toHaveLength(0);
      expect(spansOn(`process ${URN}`, topic)).toHaveLength(0);
      // Only the test's own span was recorded.
      expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['request']);
      expect((await metricsFor(topic)).points).toBe(0);
    } finally {
      await app.close();
    }
  });
});
