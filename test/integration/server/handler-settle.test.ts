// Settling from the handler (ctx.retry / ctx.deadLetter), pause / resume and a user's isRetriable rule, against the
// real broker (on the client of BQ_TEST_CLIENT), through the direct call and through Nest's pipeline, and the same
// in the in-memory testing kit.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import {
  Controller,
  Module,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type NestInterceptor,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  BabelNonRetriableError,
  BabelPulsarServer,
  EnvelopeCodec,
  Idempotent,
  InMemoryIdempotencyStore,
  type PulsarClientLike,
  type PulsarMessage,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import { backlog, newClient, receiveN, sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { quietLogger, startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

class AllowAll implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}
class PassThrough implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler) {
    return next.handle();
  }
}

const calls: string[] = [];
const secondCallErrors: string[] = [];

@Controller()
class Settlers {
  @BabelHandler('urn:t:dead')
  dead(@Ctx() ctx: BabelContext) {
    calls.push('dead');
    ctx.deadLetter('order 7 has no lines');
  }

  @BabelHandler('urn:t:thrown')
  thrown() {
    calls.push('thrown');
    throw new BabelNonRetriableError('order 7 has no lines');
  }

  @UseGuards(AllowAll)
  @UseInterceptors(PassThrough)
  @BabelHandler('urn:t:dead-piped')
  async deadPiped(@Ctx() ctx: BabelContext) {
    calls.push('dead-piped');
    await sleep(1);
    ctx.deadLetter('order 7 has no lines');
  }

  @BabelHandler('urn:t:retry')
  retry(@Ctx() ctx: BabelContext) {
    calls.push(`retry ${ctx.getAttempts()}`);
    ctx.retry({ delayMs: 150, reason: 'inventory is syncing' });
  }

  @UseGuards(AllowAll)
  @UseInterceptors(PassThrough)
  @BabelHandler('urn:t:retry-piped')
  retryPiped(@Ctx() ctx: BabelContext) {
    calls.push(`retry-piped ${ctx.getAttempts()}`);
    if (ctx.getAttempts() === 0) ctx.retry({ reason: 'once more' });
  }

  @BabelHandler('urn:t:both')
  both(@Ctx() ctx: BabelContext) {
    calls.push(`both ${ctx.getAttempts()}`);
    ctx.retry({ reason: 'first word' });
    try {
      ctx.deadLetter('second word');
    } catch (error) {
      secondCallErrors.push((error as Error).message);
    }
    throw new Error('and then it threw');
  }
}

function wireOf(urn: string, topic: string, id: string) {
  const envelope = EnvelopeCodec.make(urn, { order_id: 7 }, { queue: topic, id });
  return { data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) };
}

async function publishAll(client: PulsarClientLike, topic: string, messages: Array<[urn: string, id: string]>) {
  const producer = await client.createProducer({ topic });
  try {
    for (const [urn, id] of messages) await producer.send(wireOf(urn, topic, id));
  } finally {
    await producer.close();
  }
}

const bodyOf = (message: PulsarMessage) => JSON.parse(message.getData().toString('utf8'));

describe('settling from the handler (real broker)', () => {
  let client: PulsarClientLike;
  let service: RunningService | null = null;
  beforeAll(() => {
    client = newClient();
  });
  afterEach(async () => {
    await service?.close();
    service = null;
    calls.splice(0);
  });
  afterAll(async () => {
    await client.close();
  });

  it('ctx.deadLetter leaves the record a thrown BabelNonRetriableError leaves, direct and through the pipeline', async () => {
    const topic = uniqueTopic('settle-dead');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    service = await startService([Settlers], { client, topics: topic, maxAttempts: 3 });
    await publishAll(client, topic, [
      ['urn:t:dead', 'dead'],
      ['urn:t:thrown', 'thrown'],
      ['urn:t:dead-piped', 'dead-piped'],
    ]);
    const records = new Map((await receiveN(dlq, 3)).map((record) => [bodyOf(record).meta.id as string, record]));
    await dlq.close();
    expect(calls.sort()).toEqual(['dead', 'dead-piped', 'thrown']); // each once: not retriable
    const thrown = records.get('thrown')!;
    const normalise = (record: PulsarMessage) => {
      const body = bodyOf(record);
      const properties: Record<string, string> = { ...record.getProperties() };
      for (const key of ['bq-message-id', 'bq-job', 'bq-trace-id', 'bq-dead-letter-failed-at']) delete properties[key];
      return {
        ...body,
        job: 'urn',
        meta: { ...body.meta, id: 'id', created_at: 0 },
        trace_id: 'trace',
        dead_letter: { ...body.dead_letter, failed_at: 0 },
        properties,
      };
    };
    for (const id of ['dead', 'dead-piped']) expect(normalise(records.get(id)!)).toEqual(normalise(thrown));
    expect(bodyOf(thrown).dead_letter).toMatchObject({
      reason: 'failed',
      error: 'order 7 has no lines',
      exception: 'BabelNonRetriableError',
      attempts: 1,
    });
    expect(service.settled.map((event) => event.action)).toEqual(['dead-letter', 'dead-letter', 'dead-letter']);
  });

  it('ctx.retry: delayed retry copies with the attempt count, then the dead-letter topic at maxAttempts', async () => {
    const topic = uniqueTopic('settle-retry');
    const observer = await client.subscribe({ topic, subscription: 'observer', subscriptionType: 'Shared' });
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    service = await startService([Settlers], { client, topics: topic, maxAttempts: 3 });
    await publishAll(client, topic, [
      ['urn:t:retry', 'retry'],
      ['urn:t:retry-piped', 'retry-piped'],
    ]);
    const [record] = await receiveN(dlq, 1);
    await dlq.close();
    // The original, two delayed copies of urn:t:retry, one copy of urn:t:retry-piped (handled on attempt 1).
    const copies = await receiveN(observer, 5);
    await observer.close();
    const retries = copies.filter((copy) => copy.getProperties()['bq-attempts'] !== undefined);
    expect(
      retries.map((copy) => [
        bodyOf(copy).meta.id,
        copy.getProperties()['bq-attempts'],
        copy.getProperties()['bq-delay'],
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['retry', '1', '150'],
        ['retry', '2', '150'],
        ['retry-piped', '1', undefined],
      ]),
    );
    expect(bodyOf(record!)).toMatchObject({
      meta: { id: 'retry' },
      attempts: 3,
      dead_letter: { reason: 'failed', error: 'inventory is syncing', exception: 'RetryRequestedError', attempts: 3 },
    });
    await waitFor('the piped handler to handle its retry', () => calls.includes('retry-piped 1'));
    expect(calls.filter((call) => call.startsWith('retry '))).toEqual(['retry 0', 'retry 1', 'retry 2']);
  });

  it('the first call decides: a second call throws, a later throw is ignored', async () => {
    const topic = uniqueTopic('settle-both');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    service = await startService([Settlers], { client, topics: topic, maxAttempts: 2 });
    await publishAll(client, topic, [['urn:t:both', 'both']]);
    const [record] = await receiveN(dlq, 1);
    await dlq.close();
    expect(calls).toEqual(['both 0', 'both 1']); // retried, as the first call asked, despite the throw
    expect(secondCallErrors[0]).toBe(
      'ctx.deadLetter() was called after ctx.retry(): the first call decides how the message is settled',
    );
    expect(bodyOf(record!).dead_letter).toMatchObject({ error: 'first word', exception: 'RetryRequestedError' });
  });
});

describe('pause and resume (real broker)', () => {
  let client: PulsarClientLike;
  let service: RunningService | null = null;
  const handled: number[] = [];

  @Controller()
  class Counter {
    @BabelHandler('urn:t:count')
    count(@Payload() data: { n: number }) {
      handled.push(data.n);
    }
  }

  beforeAll(() => {
    client = newClient();
  });
  afterEach(async () => {
    await service?.close();
    service = null;
    handled.splice(0);
  });
  afterAll(async () => {
    await client.close();
  });

  it('holds what is published while paused, and delivers all of it once after resume', async () => {
    const topic = uniqueTopic('pause');
    service = await startService([Counter], { client, topics: topic, concurrency: 2 });
    const producer = await client.createProducer({ topic });
    const send = async (n: number) => {
      const envelope = EnvelopeCodec.make('urn:t:count', { n }, { queue: topic });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
    };
    await send(0);
    await waitFor('the first message', () => handled.length === 1);

    await service.server.pause();
    expect(service.server.describe()).toEqual([expect.objectContaining({ topic, paused: true, active: 0 })]);
    await waitFor('the paused status', () => statusOf(service!) === 'paused');
    for (let n = 1; n <= 20; n++) await send(n);
    await sleep(500);
    expect(handled).toEqual([0]);

    service.server.resume();
    await waitFor('all twenty after resume', () => handled.length === 21);
    await producer.close();
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    await sleep(300);
    expect([...handled].sort((a, b) => a - b)).toEqual(Array.from({ length: 21 }, (_, n) => n));
    expect(service.server.describe()[0]!.paused).toBe(false);
    expect(statusOf(service)).toBe('connected');
  });

  it('while paused the consumer takes from the broker no more than its receiver queue allows', async () => {
    const topic = uniqueTopic('pause-permits');
    service = await startService([Counter], { client, topics: topic, receiverQueueSize: 5 });
    await service.server.pause();
    // Unbatched, so that the broker counts messages as the receiver queue does (a batch is one entry).
    const producer = await client.createProducer({ topic, batchingEnabled: false });
    const sends: Array<Promise<unknown>> = [];
    for (let n = 1; n <= 60; n++) {
      const envelope = EnvelopeCodec.make('urn:t:count', { n }, { queue: topic });
      sends.push(
        producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) }),
      );
    }
    await Promise.all(sends);
    await producer.close();
    await sleep(1000);
    const stats = (await (await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/stats`)).json()) as {
      subscriptions: Record<string, { msgBacklog: number; unackedMessages: number }>;
    };
    const subscription = stats.subscriptions.babelqueue!;
    // Native: its receiver queue (5) and what the consumer holds (5), the listener then waits; WebSocket: 5.
    expect(subscription.unackedMessages).toBeLessThanOrEqual(11);
    expect(subscription.msgBacklog).toBe(60);
    expect(handled).toEqual([]);
    service.server.resume();
    await waitFor('all sixty after resume', () => handled.length === 60);
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    expect([...handled].sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, n) => n + 1));
  });

  it('pause() resolves once the message being handled is settled (acknowledged on the broker)', async () => {
    const topic = uniqueTopic('pause-inflight');
    let release: () => void = () => {};
    const started: number[] = [];
    @Controller()
    class Slow {
      @BabelHandler('urn:t:slow')
      async slow(@Payload() data: { n: number }) {
        started.push(data.n);
        await new Promise<void>((resolve) => (release = resolve));
      }
    }
    service = await startService([Slow], { client, topics: topic });
    await publishAll(client, topic, [['urn:t:slow', 'slow']]);
    await waitFor('the handler to start', () => started.length === 1);
    let paused = false;
    const pausing = service.server.pause().then(() => (paused = true));
    await sleep(200);
    expect(paused).toBe(false);
    expect(service.server.describe()[0]).toMatchObject({ active: 1, paused: true });
    release();
    await pausing;
    expect(service.settled).toEqual([expect.objectContaining({ action: 'ack' })]);
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
  });

  it('pauses one subscription of a topic and refuses a target it does not consume', async () => {
    const topic = uniqueTopic('pause-one');
    service = await startService([Counter], { client, topics: topic });
    await service.server.pause({ topic, subscription: 'babelqueue' });
    await expect(service.server.pause({ topic: `${topic}-typo` })).rejects.toThrow(
      `pause(): this server consumes no topic "${topic}-typo"; it consumes ${topic} (subscription babelqueue)`,
    );
    service.server.resume({ topic });
    expect(service.server.describe()[0]!.paused).toBe(false);
  });
});

function statusOf(service: RunningService): string | undefined {
  let status: string | undefined;
  service.server.status.subscribe((value) => (status = value)).unsubscribe();
  return status;
}

describe('in the testing kit, identically', () => {
  it('ctx.retry and ctx.deadLetter settle as on the broker; a retry is not remembered as handled', async () => {
    const pulsar = new InMemoryPulsar();
    const store = new InMemoryIdempotencyStore();
    const ran: string[] = [];
    @Controller()
    class Kit {
      @Idempotent({ store })
      @BabelHandler('urn:t:kit')
      kit(@Ctx() ctx: BabelContext) {
        ran.push(`kit ${ctx.getAttempts()}`);
        if (ctx.getAttempts() === 0) ctx.retry({ delayMs: 60_000 });
      }

      @BabelHandler('urn:t:kit-dead')
      dead(@Ctx() ctx: BabelContext) {
        ctx.deadLetter('order 7 has no lines');
      }
    }
    const kit = await startService([Kit], { client: pulsar, topics: 'orders' });
    try {
      await publishAll(pulsar, 'orders', [
        ['urn:t:kit', 'kit'],
        ['urn:t:kit-dead', 'kit-dead'],
      ]);
      await waitFor('two settlements', () => kit.settled.length === 2);
      const [retryCopy] = pulsar.published('orders').slice(2);
      expect(retryCopy!.properties).toMatchObject({ 'bq-attempts': '1', 'bq-delay': '60000' });
      const [record] = pulsar.published('orders.dlq');
      expect(JSON.parse(record!.data.toString('utf8')).dead_letter).toMatchObject({
        error: 'order 7 has no lines',
        exception: 'BabelNonRetriableError',
        attempts: 1,
      });
      pulsar.advance(60_000);
      await waitFor('the retry handled', () => kit.settled.length === 3);
      expect(ran).toEqual(['kit 0', 'kit 1']);
      expect(kit.settled.map((event) => event.action)).toEqual(['retry', 'dead-letter', 'ack']);
    } finally {
      await kit.close();
    }
  });

  it('module-wide idempotency does not remember a message whose handler asked for a retry', async () => {
    const pulsar = new InMemoryPulsar();
    const ran: number[] = [];
    @Controller()
    class Kit {
      @BabelHandler('urn:t:kit')
      kit(@Ctx() ctx: BabelContext) {
        ran.push(ctx.getAttempts());
        if (ctx.getAttempts() === 0) ctx.retry();
      }
    }
    const kit = await startService([Kit], {
      client: pulsar,
      topics: 'orders',
      idempotency: { store: new InMemoryIdempotencyStore() },
    });
    try {
      await publishAll(pulsar, 'orders', [['urn:t:kit', 'once']]);
      await waitFor('the retry handled', () => kit.settled.length === 2);
      expect(ran).toEqual([0, 1]);
      expect(kit.settled.map((event) => event.action)).toEqual(['retry', 'ack']);
    } finally {
      await kit.close();
    }
  });

  it('a server paused before listen() starts paused', async () => {
    const pulsar = new InMemoryPulsar();
    const seen: number[] = [];
    @Controller()
    class Kit {
      @BabelHandler('urn:t:count')
      count(@Payload() data: { n: number }) {
        seen.push(data.n);
      }
    }
    @Module({ controllers: [Kit] })
    class KitModule {}
    const server = new BabelPulsarServer({ client: pulsar, topics: 'orders', logger: quietLogger });
    const app = await NestFactory.createMicroservice(KitModule, { strategy: server, logger: false });
    try {
      await app.init();
      await server.pause({ topic: 'orders' });
      await app.listen();
      expect(server.describe()).toEqual([expect.objectContaining({ paused: true })]);
      await publishAll(pulsar, 'orders', [['urn:t:count', 'a']]);
      await sleep(100);
      expect(seen).toEqual([]);
      server.resume();
      await waitFor('the message after resume', () => seen.length === 1);
    } finally {
      await app.close();
    }
  });

  it('pause and resume', async () => {
    const pulsar = new InMemoryPulsar();
    const seen: number[] = [];
    @Controller()
    class Kit {
      @BabelHandler('urn:t:count')
      count(@Payload() data: { n: number }) {
        seen.push(data.n);
      }
    }
    const kit = await startService([Kit], { client: pulsar, topics: 'orders' });
    try {
      await kit.server.pause();
      const producer = await pulsar.createProducer({ topic: 'orders' });
      for (let n = 1; n <= 3; n++) {
        const envelope = EnvelopeCodec.make('urn:t:count', { n }, { queue: 'orders' });
        await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
      }
      await sleep(100);
      expect(seen).toEqual([]);
      kit.server.resume();
      await waitFor('three handled', () => seen.length === 3);
      expect(seen).toEqual([1, 2, 3]);
    } finally {
      await kit.close();
    }
  });
});
