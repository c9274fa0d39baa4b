// Request/response (docs/request-response.md), played the same way on the testing kit and on the broker with each
// client: a round trip of each kind of return value, a dead-lettered request, a retried one, a time-out and its late
// reply, and a request answered by hand as another SDK would.
import {
  Controller,
  ForbiddenException,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type NestInterceptor,
} from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { lastValueFrom, map, of, toArray, type Observable } from 'rxjs';
import { BabelContext, BabelHandler, BabelPulsarClient, EnvelopeCodec } from '../../lib/index.js';
import { RequestFailedError, RequestTimeoutError } from '../../lib/envelope/index.js';
import type { PulsarClientLike, PulsarConsumer, PulsarMessage } from '../../lib/pulsar/client-types.js';
import { startService, type RunningService } from './nest-app.js';

export class PaymentDeclined extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentDeclined';
  }
}

/** Calls per URN, and the releases of the handler that waits. */
export const requestCalls = new Map<string, number>();
let releaseSlow: (() => void) | null = null;
const count = (urn: string) => requestCalls.set(urn, (requestCalls.get(urn) ?? 0) + 1).get(urn)!;

/** An interceptor's mapping is part of the reply, as on Nest's own transports. */
class Wrap implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((value: unknown) => ({ wrapped: value })));
  }
}

class Refuse implements CanActivate {
  canActivate(): boolean {
    throw new ForbiddenException('not for you');
  }
}

@Controller()
export class RequestHandlers {
  @BabelHandler('urn:rpc:wrapped')
  @UseInterceptors(Wrap)
  wrapped(@Payload() data: { n: number }) {
    return data.n;
  }

  @BabelHandler('urn:rpc:guarded')
  @UseGuards(Refuse)
  guarded() {
    return 'never';
  }

  @BabelHandler('urn:rpc:quote')
  quote(@Payload() data: { sku: string; qty: number }) {
    count('urn:rpc:quote');
    return { sku: data.sku, total: data.qty * 5 };
  }

  @BabelHandler('urn:rpc:number')
  number(@Payload() data: { n: number }) {
    return data.n * 2;
  }

  @BabelHandler('urn:rpc:stream')
  stream() {
    return of(1, 2, 3);
  }

  @BabelHandler('urn:rpc:nothing')
  nothing() {
    count('urn:rpc:nothing');
  }

  @BabelHandler('urn:rpc:declined', { maxAttempts: 3 })
  declined(@Payload() data: { card: string }) {
    count('urn:rpc:declined');
    throw new PaymentDeclined(`card ${data.card} declined`);
  }

  @BabelHandler('urn:rpc:flaky', { maxAttempts: 5 })
  flaky(@Ctx() ctx: BabelContext) {
    const call = count('urn:rpc:flaky');
    if (call < 3) throw new Error(`flaky attempt ${ctx.getAttempts()}`);
    return { call };
  }

  @BabelHandler('urn:rpc:slow')
  async slow() {
    await new Promise<void>((resolve) => (releaseSlow = resolve));
    return { late: true };
  }
}

export interface RequestReplyRig {
  service: RunningService;
  client: BabelPulsarClient;
  close(): Promise<void>;
}

export async function startRequestReply(client: PulsarClientLike, topic: string): Promise<RequestReplyRig> {
  requestCalls.clear();
  const service = await startService([RequestHandlers], { client, topics: topic });
  const caller = new BabelPulsarClient({ client, topic });
  return {
    service,
    client: caller,
    close: async () => {
      releaseSlow?.();
      await caller.close();
      await service.close();
    },
  };
}

const waitUntil = async (what: string, check: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

export async function expectRoundTrips(rig: RequestReplyRig): Promise<void> {
  const { client } = rig;
  await expect(lastValueFrom(client.send('urn:rpc:quote', { sku: 'A-1', qty: 3 }))).resolves.toEqual({
    sku: 'A-1',
    total: 15,
  });
  await expect(lastValueFrom(client.send('urn:rpc:number', { n: 21 }))).resolves.toBe(42);
  // An Observable answers with its last value; nothing returned completes without a value (as Nest's transports).
  await expect(lastValueFrom(client.send('urn:rpc:stream', {}))).resolves.toBe(3);
  await expect(lastValueFrom(client.send('urn:rpc:nothing', {}).pipe(toArray()))).resolves.toEqual([]);
  // Concurrent calls each get their own reply.
  const many = await Promise.all(
    Array.from({ length: 20 }, (_, qty) => lastValueFrom(client.send('urn:rpc:quote', { sku: `S${qty}`, qty }))),
  );
  expect(many).toEqual(Array.from({ length: 20 }, (_, qty) => ({ sku: `S${qty}`, total: qty * 5 })));
  // Nest's layers: an interceptor maps the reply; a guard's refusal (a 4xx, not retried) is the error.
  await expect(lastValueFrom(client.send('urn:rpc:wrapped', { n: 7 }))).resolves.toEqual({ wrapped: 7 });
  await expect(lastValueFrom(client.send('urn:rpc:guarded', {}))).rejects.toMatchObject({
    name: 'RequestFailedError',
    errorClass: 'ForbiddenException',
    message: 'not for you',
  });
  expect(client.replyStats).toMatchObject({ waiting: 0, late: 0, unreadable: 0, delivered: 26 });
}

export async function expectDeadLetteredRequestFails(rig: RequestReplyRig): Promise<void> {
  const error = await lastValueFrom(rig.client.send('urn:rpc:declined', { card: '4242' })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RequestFailedError);
  expect(error).toMatchObject({
    message: 'card 4242 declined',
    errorClass: 'PaymentDeclined',
    urn: 'urn:rpc:declined',
  });
  expect(requestCalls.get('urn:rpc:declined')).toBe(3);
  // The next request is a barrier: a second reply to the first one would have come before its own.
  await lastValueFrom(rig.client.send('urn:rpc:number', { n: 1 }));
  expect(rig.client.replyStats).toMatchObject({ late: 0, waiting: 0 });
  const deadLettered = rig.service.settled.filter((event) => event.urn === 'urn:rpc:declined');
  expect(deadLettered.map(({ action }) => action)).toEqual(['retry', 'retry', 'dead-letter']);
}

export async function expectRetriedRequestRepliesOnce(rig: RequestReplyRig): Promise<void> {
  await expect(lastValueFrom(rig.client.send('urn:rpc:flaky', {}))).resolves.toEqual({ call: 3 });
  await lastValueFrom(rig.client.send('urn:rpc:number', { n: 1 }));
  expect(rig.client.replyStats).toMatchObject({ late: 0, waiting: 0, delivered: 2 });
}

export async function expectTimeoutAndLateReplyDropped(rig: RequestReplyRig): Promise<void> {
  const error = await lastValueFrom(rig.client.send('urn:rpc:slow', {}, { timeoutMs: 300 })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RequestTimeoutError);
  expect(error).toMatchObject({ urn: 'urn:rpc:slow', timeoutMs: 300 });
  await waitUntil('the slow handler to start', () => releaseSlow !== null);
  releaseSlow!();
  // The handler ends after its caller gave up: its reply is dropped and counted, never handed to another call.
  const other = lastValueFrom(rig.client.send('urn:rpc:number', { n: 4 }));
  await waitUntil('the late reply', () => rig.client.replyStats.late === 1);
  await expect(other).resolves.toBe(8);
  expect(rig.client.replyStats).toMatchObject({ late: 1, waiting: 0 });
}

/** A request made by hand (as another SDK would): the reply's properties and body are the documented ones. */
export async function expectHandMadeRequestAnswered(
  pulsar: PulsarClientLike,
  topic: string,
  replyTopic: string,
  receiveOne: (consumer: PulsarConsumer) => Promise<PulsarMessage>,
): Promise<void> {
  const consumer = await pulsar.subscribe({
    topic: replyTopic,
    subscription: 'by-hand',
    subscriptionType: 'Exclusive',
  });
  const producer = await pulsar.createProducer({ topic });
  try {
    const envelope = EnvelopeCodec.make('urn:rpc:quote', { sku: 'H', qty: 2 }, { queue: topic });
    await producer.send({
      data: EnvelopeCodec.encodeToBuffer(envelope),
      properties: {
        'bq-job': 'urn:rpc:quote',
        'bq-message-id': envelope.meta.id,
        'bq-schema-version': '1',
        'bq-attempts': '0',
        'bq-reply-to': replyTopic,
        'bq-correlation-id': 'corr-by-hand-1',
      },
    });
    const reply = await receiveOne(consumer);
    expect(reply.getProperties()).toMatchObject({
      'bq-job': 'urn:rpc:quote',
      'bq-correlation-id': 'corr-by-hand-1',
      'bq-reply-status': 'ok',
      'bq-schema-version': '1',
      'bq-trace-id': envelope.trace_id,
    });
    const body = JSON.parse(reply.getData().toString('utf8')) as { job: string; data: unknown };
    expect(body.job).toBe('urn:rpc:quote');
    expect(body.data).toEqual({ result: { sku: 'H', total: 10 } });
  } finally {
    await producer.close();
    await consumer.close();
  }
}
