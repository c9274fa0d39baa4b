// OpenTelemetry through the real broker with the real OTel SDK: publish -> process parent/child spans, the
// trace_id fallback without traceparent, trace headers kept on retry copies and dead-letter records, metrics.
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
  EnvelopeCodec,
  pulsarProperties,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { otelTraceIdOf, parentSpanIdOf, uuidOfOtelTraceId } from '../../../lib/otel/trace-id.js';
import { newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

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

  it('keeps a trace id given by the caller; outside any span the publish span is a root span', async () => {
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
    await trace.getTracer('test').startActiveSpan('request', async (request) => {
      await publisher.publish(URN, { n: 1 }, { topic, traceId: 'order-7' });
      request.end();
    });
    // Outside any span (a tracer provider is registered): the publish span starts a trace of its own.
    await publisher.publish(URN, { n: 2 }, { topic });
    await waitFor('two deliveries', () => seen.length === 2);
    expect(seen[0]!.traceId).toBe('order-7');
    expect(seen[0]!.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const roots = spans(`publish ${URN}`).filter((span) => span.parentSpanContext === undefined);
    expect(roots).toHaveLength(1);
    const root = roots[0]!.spanContext();
    expect(seen[1]).toEqual({
      traceId: uuidOfOtelTraceId(root.traceId),
      traceparent: `00-${root.traceId}-${root.spanId}-01`,
    });
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
