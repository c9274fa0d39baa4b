// BabelPulsarServer settlement against the real broker, through a real Nest microservice.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  EnvelopeCodec,
  SchemaVersionRejectedError,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import type { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { backlog, expectNothing, newClient, receiveN, sleep, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

let client: PulsarClientLike;
let service: RunningService | null = null;
beforeAll(() => {
  client = newClient();
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await client.close();
});

async function publish(topic: string, payload: Buffer, properties: Record<string, string>): Promise<void> {
  const producer = await client.createProducer({ topic });
  try {
    await producer.send({ data: payload, properties });
  } finally {
    await producer.close();
  }
}

function envelopeFor(urn: string, data: Record<string, unknown>, topic: string) {
  const envelope = EnvelopeCodec.make(urn, data, { queue: topic });
  return { envelope, payload: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) };
}

const ORDER = 'urn:babel:orders:created';

describe('BabelPulsarServer settlement (real broker)', () => {
  it('acknowledges a handled message once: handler called once, backlog drains to zero', async () => {
    const topic = uniqueTopic('ok');
    const seen: Array<{ data: unknown; attempts: number; urn: string; topic: string; traceId: string }> = [];
    @Controller()
    class Orders {
      @BabelHandler(ORDER)
      created(@Payload() data: unknown, @Ctx() ctx: BabelContext) {
        seen.push({
          data,
          attempts: ctx.getAttempts(),
          urn: ctx.getUrn(),
          topic: ctx.getTopic(),
          traceId: ctx.getTraceId(),
        });
      }
    }
    service = await startService([Orders], { client, topics: topic });
    const { envelope, payload, properties } = envelopeFor(ORDER, { order_id: 1, note: 'Café ☕' }, topic);
    await publish(topic, payload, properties);
    await waitFor('the ack', () => service!.settled.length === 1);
    expect(seen).toEqual([
      { data: { order_id: 1, note: 'Café ☕' }, attempts: 0, urn: ORDER, topic, traceId: envelope.trace_id },
    ]);
    expect(service.settled[0]).toMatchObject({ action: 'ack', urn: ORDER });
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    await sleep(300);
    expect(seen).toHaveLength(1);
  });

  it('gives a handler that always throws exactly maxAttempts deliveries, then one dead-letter record', async () => {
    const topic = uniqueTopic('fail');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    const attempts: number[] = [];
    @Controller()
    class Orders {
      @BabelHandler(ORDER)
      created(@Ctx() ctx: BabelContext) {
        attempts.push(ctx.getAttempts());
        throw new RangeError('payment gateway timeout');
      }
    }
    service = await startService([Orders], { client, topics: topic, maxAttempts: 3 });
    const { envelope, payload, properties } = envelopeFor(ORDER, { order_id: 2, big: 1.5 }, topic);
    await publish(topic, payload, {
      ...properties,
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    const [record] = await receiveN(dlq, 1);
    expect(attempts).toEqual([0, 1, 2]);
    const body = JSON.parse(record!.getData().toString('utf8'));
    expect(body).toMatchObject({
      job: ORDER,
      trace_id: envelope.trace_id,
      data: { order_id: 2, big: 1.5 },
      meta: envelope.meta,
      attempts: 3,
      dead_letter: {
        reason: 'failed',
        error: 'payment gateway timeout',
        exception: 'RangeError',
        original_queue: topic,
        attempts: 3,
        lang: 'node',
      },
    });
    expect(Object.keys(body)).toEqual(['job', 'trace_id', 'data', 'meta', 'attempts', 'dead_letter']);
    expect(Number.isInteger(body.dead_letter.failed_at)).toBe(true);
    expect(Math.abs(body.dead_letter.failed_at - Date.now())).toBeLessThan(60_000);
    expect({ ...record!.getProperties() }).toEqual({
      ...properties,
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'bq-attempts': '3',
      'bq-dead-letter-reason': 'failed',
      'bq-dead-letter-error': 'payment gateway timeout',
      'bq-dead-letter-attempts': '3',
      'bq-dead-letter-original-queue': topic,
      'bq-dead-letter-failed-at': String(body.dead_letter.failed_at),
      'bq-dead-letter-lang': 'node',
      'bq-dead-letter-topic': `persistent://public/default/${topic}`,
    });
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    await expectNothing(dlq, 500);
    expect(attempts).toHaveLength(3);
    await dlq.close();
  });

  it('retries a handler that fails twice and then succeeds: attempts 0, 1, 2 and no dead letter', async () => {
    const topic = uniqueTopic('flaky');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    const attempts: number[] = [];
    @Controller()
    class Payments {
      @BabelHandler('urn:babel:payments:charge')
      charge(@Ctx() ctx: BabelContext) {
        attempts.push(ctx.getAttempts());
        if (ctx.getAttempts() < 2) throw new Error('transient');
        expect(ctx.getProperties()['bq-attempts']).toBe('2');
        expect(ctx.getEnvelope().attempts).toBe(2);
      }
    }
    service = await startService([Payments], { client, topics: topic });
    const { payload, properties } = envelopeFor('urn:babel:payments:charge', { amount: 10 }, topic);
    await publish(topic, payload, properties);
    await waitFor('the final ack', () => service!.settled.some((e) => e.action === 'ack'));
    expect(attempts).toEqual([0, 1, 2]);
    expect(service.settled.map((e) => e.action)).toEqual(['retry', 'retry', 'ack']);
    await expectNothing(dlq, 500);
    await dlq.close();
  });

  it('writes a poison message (invalid UTF-8) to the dead-letter topic byte-exact, with its properties', async () => {
    const topic = uniqueTopic('poison');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    const onError = jest.fn<(...args: any[]) => any>();
    const handled = jest.fn<(...args: any[]) => any>();
    @Controller()
    class Orders {
      @BabelHandler(ORDER)
      created() {
        handled();
      }
    }
    service = await startService([Orders], { client, topics: topic, onError });
    const bytes = Buffer.from([0x7b, 0x22, 0x6a, 0xc3, 0x28, 0xff, 0x00, 0x7d]);
    const properties = { 'bq-job': ORDER, 'bq-schema-version': '1', 'bq-attempts': '0', 'x-origin': 'ünïcode' };
    await publish(topic, bytes, properties);
    const [record] = await receiveN(dlq, 1);
    expect(record!.getData().equals(bytes)).toBe(true);
    expect({ ...record!.getProperties() }).toMatchObject({
      ...properties,
      'bq-dead-letter-reason': 'poison',
      'bq-dead-letter-attempts': '1',
      'bq-dead-letter-original-queue': topic,
      'bq-dead-letter-lang': 'node',
    });
    expect(record!.getProperties()['bq-dead-letter-error']).toMatch(/UTF-8/);
    expect(handled).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledTimes(1);
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    await dlq.close();
  });

  it('acknowledges a bq-schema-version 2 message once, without any handler, and reports it', async () => {
    const topic = uniqueTopic('gate');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    const onError = jest.fn<(...args: any[]) => any>();
    const onUnknownUrn = jest.fn<(...args: any[]) => any>();
    const handled = jest.fn<(...args: any[]) => any>();
    @Controller()
    class Orders {
      @BabelHandler(ORDER)
      created() {
        handled();
      }
    }
    service = await startService([Orders], { client, topics: topic, onError, onUnknownUrn, maxAttempts: 5 });
    const { payload, properties } = envelopeFor(ORDER, {}, topic);
    await publish(topic, payload, { ...properties, 'bq-schema-version': '2' });
    await waitFor('the gate settlement', () => service!.settled.length === 1);
    expect(service.settled[0]!.action).toBe('ack');
    expect(handled).not.toHaveBeenCalled();
    expect(onUnknownUrn).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledTimes(1);
    const [error, envelope] = onError.mock.calls[0]!;
    expect(error).toBeInstanceOf(SchemaVersionRejectedError);
    expect(envelope).toEqual({});
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    await expectNothing(dlq, 500);
    expect(service.settled).toHaveLength(1);
    await dlq.close();
  });

  it('routes on bq-job over the body URN and calls onRoutingMismatch with both', async () => {
    const topic = uniqueTopic('route');
    const calls: string[] = [];
    const onRoutingMismatch = jest.fn<(...args: any[]) => any>();
    @Controller()
    class Router {
      @BabelHandler('urn:babel:a')
      a(@Ctx() ctx: BabelContext) {
        calls.push(`a:${ctx.getEnvelope().job}`);
      }
      @BabelHandler('urn:babel:b')
      b(@Ctx() ctx: BabelContext) {
        calls.push(`b:${ctx.getEnvelope().job}`);
      }
    }
    service = await startService([Router], { client, topics: topic, onRoutingMismatch });
    const { payload, properties } = envelopeFor('urn:babel:a', {}, topic);
    await publish(topic, payload, { ...properties, 'bq-job': 'urn:babel:b' });
    const rest = { ...properties };
    delete rest['bq-job'];
    await publish(topic, payload, rest);
    await waitFor('two acks', () => service!.settled.length === 2);
    expect(calls).toEqual(['b:urn:babel:a', 'a:urn:babel:a']);
    expect(onRoutingMismatch).toHaveBeenCalledTimes(1);
    expect(onRoutingMismatch.mock.calls[0]!.slice(0, 2)).toEqual(['urn:babel:b', 'urn:babel:a']);
  });

  it('hands an unmapped URN to onUnknownUrn and acknowledges it', async () => {
    const topic = uniqueTopic('unknown-hook');
    const onUnknownUrn = jest.fn(async (..._args: any[]) => sleep(20));
    @Controller()
    class Nothing {
      @BabelHandler('urn:babel:other')
      other() {}
    }
    service = await startService([Nothing], { client, topics: topic, onUnknownUrn });
    const { payload, properties } = envelopeFor('urn:babel:nobody', { x: 1 }, topic);
    await publish(topic, payload, properties);
    await waitFor('the ack', () => service!.settled.length === 1);
    expect(service.settled[0]!.action).toBe('ack');
    expect(onUnknownUrn).toHaveBeenCalledTimes(1);
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
  });

  it('retries an unmapped URN without hook and dead-letters it with reason unknown_urn', async () => {
    const topic = uniqueTopic('unknown');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    @Controller()
    class Nothing {
      @BabelHandler('urn:babel:other')
      other() {}
    }
    service = await startService([Nothing], { client, topics: topic, maxAttempts: 2 });
    const { payload, properties } = envelopeFor('urn:babel:nobody', { x: 1 }, topic);
    await publish(topic, payload, properties);
    const [record] = await receiveN(dlq, 1);
    const body = JSON.parse(record!.getData().toString());
    expect(body.dead_letter).toMatchObject({ reason: 'unknown_urn', attempts: 2, exception: 'UnknownUrnError' });
    expect(service.settled.map((e) => e.action)).toEqual(['retry', 'dead-letter']);
    await dlq.close();
  });

  it("retries by negative acknowledgement on a Shared subscription with retry 'nack'", async () => {
    const topic = uniqueTopic('nack');
    const attempts: number[] = [];
    @Controller()
    class Payments {
      @BabelHandler('urn:babel:payments:charge')
      charge(@Ctx() ctx: BabelContext) {
        attempts.push(ctx.getAttempts());
        if (ctx.getAttempts() < 2) throw new Error('transient');
      }
    }
    service = await startService([Payments], {
      client,
      topics: topic,
      retry: 'nack',
      subscriptionType: 'Shared',
      nackRedeliverTimeoutMs: 200,
    });
    const { payload, properties } = envelopeFor('urn:babel:payments:charge', {}, topic);
    await publish(topic, payload, properties);
    await waitFor('the final ack', () => service!.settled.some((e) => e.action === 'ack'));
    // The redelivery count drives the attempts here: nothing was re-published.
    expect(attempts).toEqual([0, 1, 2]);
    expect(service.settled.map((e) => e.action)).toEqual(['nack', 'nack', 'ack']);
  });

  it('sends nothing to a dead-letter topic when deadLetter is false: acknowledged and dropped', async () => {
    const topic = uniqueTopic('nodlq');
    @Controller()
    class Orders {
      @BabelHandler(ORDER)
      created() {
        throw new Error('always');
      }
    }
    service = await startService([Orders], { client, topics: topic, deadLetter: false, maxAttempts: 2 });
    const { payload, properties } = envelopeFor(ORDER, {}, topic);
    await publish(topic, payload, properties);
    await waitFor('the drop', () => service!.settled.some((e) => e.action === 'drop'));
    expect(service.settled.map((e) => e.action)).toEqual(['retry', 'drop']);
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
  });

  it('consumes several topics, each with its own retry and dead-letter topic', async () => {
    const first = uniqueTopic('multi-a');
    const second = uniqueTopic('multi-b');
    const dlqA = await client.subscribe({ topic: `${first}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    const dlqB = await client.subscribe({ topic: `${second}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    @Controller()
    class Orders {
      @BabelHandler(ORDER)
      created() {
        throw new Error('no');
      }
    }
    service = await startService([Orders], { client, topics: [first, second], maxAttempts: 1 });
    for (const topic of [first, second]) {
      const { payload, properties } = envelopeFor(ORDER, { topic }, topic);
      await publish(topic, payload, properties);
    }
    const [a] = await receiveN(dlqA, 1);
    const [b] = await receiveN(dlqB, 1);
    expect(JSON.parse(a!.getData().toString()).data.topic).toBe(first);
    expect(JSON.parse(b!.getData().toString()).data.topic).toBe(second);
    await Promise.all([dlqA.close(), dlqB.close()]);
  });
});

// Compile-time check that the WebSocket client satisfies the structural interface the server takes.
const _typecheck = (c: PulsarWebSocketClient): PulsarClientLike => c;
void _typecheck;
