// Pairs of features that meet in one subscription, as scenarios that run unchanged on the testing kit and on the
// real broker (both clients): a feature is done when it works with the others, not only alone.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import { lastValueFrom, toArray } from 'rxjs';
import {
  BabelBatchContext,
  BabelContext,
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueError,
  EnvelopeCodec,
  type BabelPulsarServerOptions,
  type PulsarClientLike,
  type SettledEvent,
} from '../../lib/index.js';
import { InMemoryIdempotencyStore } from '../../lib/idempotency/index.js';
import { pulsarProperties } from '../../lib/pulsar/index.js';
import { quietLogger, startService } from './nest-app.js';

/** Where a scenario runs: the kit or the broker, and how it looks at the consumers there. */
export interface CompositionEnv {
  client: PulsarClientLike;
  /** A fresh topic-name prefix for one scenario (short names in public/default). */
  prefix(name: string): string;
  /** The names of the consumers connected to `topic` through `subscription`. */
  consumerNames(topic: string, subscription: string): Promise<string[]>;
}

const full = (topic: string) => `persistent://public/default/${topic}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function publish(
  client: PulsarClientLike,
  topic: string,
  urn: string,
  data: Record<string, unknown>,
  id?: string,
  key?: string,
) {
  const envelope = EnvelopeCodec.make(urn, data, { queue: topic, ...(id !== undefined && { id }) });
  const producer = await client.createProducer({ topic });
  try {
    await producer.send({
      data: EnvelopeCodec.encodeToBuffer(envelope),
      properties: pulsarProperties(envelope),
      ...(key !== undefined && { partitionKey: key }),
    });
  } finally {
    await producer.close();
  }
}

const actions = (settled: SettledEvent[]) => settled.map((event) => event.action);

/** topicsPattern × consumerOptions (handler and server): each topic the pattern finds gets them. */
export async function patternWithConsumerOptions(env: CompositionEnv): Promise<void> {
  const prefix = env.prefix('comp-opts');
  @Controller()
  class Found {
    @BabelHandler('urn:comp:opts', {
      topicsPattern: `${prefix}-.+`,
      patternDiscoveryMs: 100,
      subscription: 'comp-opts',
      consumerOptions: { consumerName: `${prefix}-consumer` },
    })
    handle() {}
  }
  // Published before start: the topic exists and is found at start.
  await publish(env.client, `${prefix}-a`, 'urn:comp:opts', { n: 1 });
  const service = await startService([Found], {
    client: env.client,
    topics: `${prefix}-unused`,
    consumerOptions: { receiverQueueSize: 50 },
  });
  try {
    await publish(env.client, `${prefix}-b`, 'urn:comp:opts', { n: 2 });
    await until('both topics consumed', () => service.settled.length >= 1 && service.server.describe().length === 2);
    for (const topic of [`${prefix}-a`, `${prefix}-b`])
      expect(await env.consumerNames(topic, 'comp-opts')).toEqual([`${prefix}-consumer`]);
  } finally {
    await service.close();
  }
}

/** topicsPattern × pause(): pattern-found topics pause (all, by topic, by the pattern), and a later one starts paused. */
export async function patternWithPause(env: CompositionEnv): Promise<void> {
  const prefix = env.prefix('comp-pause');
  const seen: string[] = [];
  @Controller()
  class Found {
    @BabelHandler('urn:comp:pause', { topicsPattern: `${prefix}-.+`, patternDiscoveryMs: 100 })
    handle(@Payload() data: { n: string }) {
      seen.push(data.n);
    }
  }
  // Published before start: the topic exists and is found at start (where its subscription starts at Latest).
  await publish(env.client, `${prefix}-a`, 'urn:comp:pause', { n: 'before' });
  const service = await startService([Found], { client: env.client, topics: `${prefix}-unused` });
  try {
    await publish(env.client, `${prefix}-a`, 'urn:comp:pause', { n: 'a0' });
    await until('the first message', () => seen.length === 1);
    await service.server.pause();
    expect(service.server.describe()).toEqual([expect.objectContaining({ topic: full(`${prefix}-a`), paused: true })]);
    await publish(env.client, `${prefix}-a`, 'urn:comp:pause', { n: 'a1' });
    await publish(env.client, `${prefix}-b`, 'urn:comp:pause', { n: 'b1' });
    await until('the later topic found', () => service.server.describe().length === 2);
    await sleep(300);
    expect(seen).toEqual(['a0']);
    expect(service.server.describe().map(({ paused }) => paused)).toEqual([true, true]);
    // One topic the pattern found, by its name: the other stays paused.
    service.server.resume({ topic: `${prefix}-b` });
    await until('b1 after its resume', () => seen.includes('b1'));
    await sleep(200);
    expect(seen).toEqual(['a0', 'b1']);
    await service.server.pause({ topic: full(`${prefix}-b`) });
    // The pattern by its label: every topic it found.
    service.server.resume({ topic: `${prefix}-.+` });
    await until('a1 after the pattern resumed', () => seen.includes('a1'));
    expect(service.server.describe().map(({ paused }) => paused)).toEqual([false, false]);
  } finally {
    await service.close();
  }
}

/** Two listen() at once after init, on a topic and on a pattern: one consumer each. */
export async function listenTwice(env: CompositionEnv): Promise<void> {
  const prefix = env.prefix('comp-listen');
  const seen: string[] = [];
  @Controller()
  class Twice {
    @BabelHandler('urn:comp:listen', { subscription: 'comp-listen' })
    handle(@Payload() data: { n: string }) {
      seen.push(data.n);
    }
    @BabelHandler('urn:comp:listen-found', {
      topicsPattern: `${prefix}-found-.+`,
      patternDiscoveryMs: 100,
      subscription: 'comp-found',
    })
    found(@Payload() data: { n: string }) {
      seen.push(data.n);
    }
  }
  @Module({ controllers: [Twice] })
  class TwiceModule {}
  const server = new BabelPulsarServer({ client: env.client, topics: `${prefix}-topic`, logger: quietLogger });
  const app = await NestFactory.createMicroservice(TwiceModule, { strategy: server, logger: false });
  try {
    await app.init();
    await Promise.all([app.listen(), app.listen()]);
    await app.listen();
    await publish(env.client, `${prefix}-found-a`, 'urn:comp:listen-found', { n: 'found' });
    await publish(env.client, `${prefix}-topic`, 'urn:comp:listen', { n: 'topic' });
    await until('both handled', () => seen.length === 2);
    expect(server.describe().map(({ topic }) => topic)).toEqual([`${prefix}-topic`, full(`${prefix}-found-a`)]);
    expect(await env.consumerNames(`${prefix}-topic`, 'comp-listen')).toHaveLength(1);
    expect(await env.consumerNames(`${prefix}-found-a`, 'comp-found')).toHaveLength(1);
    await sleep(200);
    expect(seen.sort()).toEqual(['found', 'topic']);
  } finally {
    await app.close();
  }
}

/** Nest's processing hooks around each handler call: a store set in the start hook reaches the handler. */
export async function processingHooks(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-hooks');
  const store = new AsyncLocalStorage<string>();
  const inHandler: Array<string | undefined> = [];
  const ends: string[] = [];
  @Controller()
  class Hooked {
    @BabelHandler('urn:comp:hooks')
    handle(@Payload() data: { n: number }) {
      inHandler.push(store.getStore());
      if (data.n === 3) throw new Error('the third fails');
    }
  }
  const service = await startService([Hooked], { client: env.client, topics: topic, maxAttempts: 1 });
  const { server, settled } = service;
  server.setOnProcessingStartHook((_transport, context, done) =>
    store.run(`urn ${(context as BabelContext).getUrn()}`, done),
  );
  server.setOnProcessingEndHook((transport, context) => {
    expect(transport).toBe(server.transportId);
    ends.push((context as BabelContext).getUrn());
  });
  try {
    for (let n = 1; n <= 5; n++) await publish(env.client, topic, 'urn:comp:hooks', { n });
    await until('five settled', () => settled.length === 5);
    expect(inHandler).toEqual(Array.from({ length: 5 }, () => 'urn urn:comp:hooks'));
    expect(ends).toHaveLength(5);
    expect(actions(settled).sort()).toEqual(['ack', 'ack', 'ack', 'ack', 'dead-letter']);
  } finally {
    await service.close();
  }
}

/** concurrency × time-outs: handlers that hang past their time-out are bounded (concurrency + maxOverdueHandlers). */
export async function overdueHandlersKeepSlots(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-overdue');
  let alive = 0;
  let mostAlive = 0;
  @Controller()
  class Hanging {
    @BabelHandler('urn:comp:overdue')
    async handle() {
      alive += 1;
      mostAlive = Math.max(mostAlive, alive);
      await sleep(600);
      alive -= 1;
    }
  }
  const service = await startService([Hanging], {
    client: env.client,
    topics: topic,
    concurrency: 2,
    maxOverdueHandlers: 2,
    handlerTimeoutMs: 100,
    maxAttempts: 1,
  });
  try {
    for (let n = 1; n <= 6; n++) await publish(env.client, topic, 'urn:comp:overdue', { n });
    await until('six settled', () => service.settled.length === 6);
    await until('the last handlers ended', () => alive === 0);
    expect(mostAlive).toBeLessThanOrEqual(4);
    expect(actions(service.settled)).toEqual(Array.from({ length: 6 }, () => 'dead-letter'));
  } finally {
    await service.close();
  }
}

/** batch × time-outs: fail(i) once the batch passed its time-out throws, as a late ctx.retry() does. */
export async function lateBatchFail(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-late-fail');
  let late: unknown = 'not called';
  @Controller()
  class SlowBatch {
    @BabelHandler('urn:comp:late-fail', { timeoutMs: 100, batch: { maxMessages: 2, maxWaitMs: 50 } })
    async handle(@Payload() _items: unknown[], @Ctx() ctx: BabelBatchContext) {
      await sleep(500);
      try {
        ctx.fail(0, new Error('too late'));
        late = 'accepted';
      } catch (error) {
        late = error;
      }
    }
  }
  const service = await startService([SlowBatch], { client: env.client, topics: topic, maxAttempts: 1 });
  try {
    await publish(env.client, topic, 'urn:comp:late-fail', { n: 1 });
    await until('the late fail', () => late !== 'not called');
    expect(late).toBeInstanceOf(BabelQueueError);
    expect((late as Error).message).toBe(
      'fail(0) was called after the message was settled (the handler passed its time-out): it has no effect',
    );
    expect(actions(service.settled)).toEqual(['dead-letter']);
  } finally {
    await service.close();
  }
}

/** settle requests × subscription type: a delayed ctx.retry() on Failover is dead-lettered at once, not retried. */
export async function refusedDelayedRetry(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-failover');
  const attempts: number[] = [];
  const errors: Error[] = [];
  @Controller()
  class Delaying {
    @BabelHandler('urn:comp:failover')
    handle(@Ctx() ctx: BabelContext) {
      attempts.push(ctx.getAttempts());
      ctx.retry({ delayMs: 1000 });
    }
  }
  const service = await startService([Delaying], {
    client: env.client,
    topics: topic,
    subscriptionType: 'Failover',
    maxAttempts: 5,
    onError: (error) => void errors.push(error),
  });
  try {
    await publish(env.client, topic, 'urn:comp:failover', { n: 1 });
    await until('settled', () => service.settled.length === 1);
    expect(attempts).toEqual([0]);
    expect(actions(service.settled)).toEqual(['dead-letter']);
    expect(errors.map(({ name, message }) => [name, message])).toEqual([
      [
        'SettleRequestRefusedError',
        'ctx.retry() delayMs needs a Shared or KeyShared subscription (got Failover): Pulsar honours delivery times only there',
      ],
    ]);
  } finally {
    await service.close();
  }
}

/** topicsPattern × batch × settle requests: a member's ctx.retry() goes back to its own found topic. */
export async function patternBatchRetry(env: CompositionEnv): Promise<void> {
  const prefix = env.prefix('comp-pbatch');
  const handled: Array<[string, number, number]> = [];
  @Controller()
  class FoundBatch {
    @BabelHandler('urn:comp:pbatch', {
      topicsPattern: `${prefix}-.+`,
      patternDiscoveryMs: 100,
      batch: { maxMessages: 2, maxWaitMs: 200 },
    })
    handle(@Payload() items: Array<{ n: number }>, @Ctx() ctx: BabelBatchContext) {
      items.forEach((item, index) => {
        const member = ctx.getMessage(index);
        handled.push([member.getTopic(), item.n, member.getAttempts()]);
        if (item.n === 2 && member.getAttempts() === 0) member.retry();
      });
    }
  }
  const service = await startService([FoundBatch], { client: env.client, topics: `${prefix}-unused` });
  try {
    // A topic found after start is read from its first message.
    await publish(env.client, `${prefix}-a`, 'urn:comp:pbatch', { n: 1 });
    await publish(env.client, `${prefix}-a`, 'urn:comp:pbatch', { n: 2 });
    await until('three settled', () => service.settled.length === 3);
    expect(actions(service.settled).sort()).toEqual(['ack', 'ack', 'retry']);
    // ctx.getTopic() names a found topic the way the pattern is written (short here).
    expect(handled.sort()).toEqual([
      [`${prefix}-a`, 1, 0],
      [`${prefix}-a`, 2, 0],
      [`${prefix}-a`, 2, 1],
    ]);
  } finally {
    await service.close();
  }
}

/** topicsPattern × idempotency: a duplicate on a found topic is skipped by the module-wide store. */
export async function patternWithIdempotency(env: CompositionEnv): Promise<void> {
  const prefix = env.prefix('comp-pidem');
  const seen: number[] = [];
  @Controller()
  class Once {
    @BabelHandler('urn:comp:pidem', { topicsPattern: `${prefix}-.+`, patternDiscoveryMs: 100 })
    handle(@Payload() data: { n: number }) {
      seen.push(data.n);
    }
  }
  const options: BabelPulsarServerOptions = {
    client: env.client,
    topics: `${prefix}-unused`,
    idempotency: { store: new InMemoryIdempotencyStore() },
  };
  const service = await startService([Once], options);
  try {
    await publish(env.client, `${prefix}-a`, 'urn:comp:pidem', { n: 1 }, 'same-id');
    await publish(env.client, `${prefix}-a`, 'urn:comp:pidem', { n: 2 }, 'same-id');
    await until('both settled', () => service.settled.length === 2);
    expect(seen).toEqual([1]);
    expect(actions(service.settled)).toEqual(['ack', 'ack']);
  } finally {
    await service.close();
  }
}

/** A caller on the scenario's client, closed by `run`'s end. */
async function withCaller(env: CompositionEnv, topic: string, run: (caller: BabelPulsarClient) => Promise<void>) {
  const caller = new BabelPulsarClient({ client: env.client, topic });
  try {
    await run(caller);
  } finally {
    await caller.close();
  }
}

/**
 * request/response × handler time-out: the attempt past its time-out is retried and answers nothing when it ends;
 * the attempt that succeeds replies, once.
 */
export async function requestPastTimeout(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rpc-timeout');
  let overdueEnded = false;
  @Controller()
  class Slow {
    @BabelHandler('urn:comp:rpc-timeout', { timeoutMs: 150, maxAttempts: 2 })
    async handle(@Ctx() ctx: BabelContext) {
      const attempt = ctx.getAttempts();
      if (attempt === 0) {
        await sleep(600);
        overdueEnded = true;
      }
      return { attempt };
    }
  }
  const service = await startService([Slow], { client: env.client, topics: topic });
  try {
    await withCaller(env, topic, async (caller) => {
      await expect(lastValueFrom(caller.send('urn:comp:rpc-timeout', {}))).resolves.toEqual({ attempt: 1 });
      await until('the overdue attempt to end', () => overdueEnded);
      await sleep(200);
      expect(caller.replyStats).toMatchObject({ delivered: 1, late: 0 });
      expect(actions(service.settled)).toEqual(['retry', 'ack']);
    });
  } finally {
    await service.close();
  }
}

/** request/response × pause(): a request waits, unanswered, while its consumer is paused, and is answered on resume. */
export async function requestWhilePaused(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rpc-pause');
  @Controller()
  class Echo {
    @BabelHandler('urn:comp:rpc-pause')
    handle(@Payload() data: { n: number }) {
      return data.n + 1;
    }
  }
  const service = await startService([Echo], { client: env.client, topics: topic });
  try {
    await withCaller(env, topic, async (caller) => {
      await service.server.pause();
      const reply = lastValueFrom(caller.send('urn:comp:rpc-pause', { n: 1 }));
      await sleep(300);
      expect(caller.replyStats).toMatchObject({ waiting: 1, delivered: 0 });
      service.server.resume();
      await expect(reply).resolves.toBe(2);
    });
  } finally {
    await service.close();
  }
}

/**
 * request/response × idempotency: a request sent again with the id of one already handled is skipped as a duplicate
 * and answered with an empty reply (the store keeps ids, not replies); a new id is handled.
 */
export async function requestWithIdempotency(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rpc-idem');
  let calls = 0;
  @Controller()
  class Once {
    @BabelHandler('urn:comp:rpc-idem')
    handle() {
      calls += 1;
      return { calls };
    }
  }
  const idempotency = { store: new InMemoryIdempotencyStore() };
  const service = await startService([Once], { client: env.client, topics: topic, idempotency });
  try {
    await withCaller(env, topic, async (caller) => {
      const send = (id: string) => lastValueFrom(caller.send('urn:comp:rpc-idem', {}, { id }).pipe(toArray()));
      await expect(send('same')).resolves.toEqual([{ calls: 1 }]);
      await expect(send('same')).resolves.toEqual([]);
      await expect(send('other')).resolves.toEqual([{ calls: 2 }]);
    });
  } finally {
    await service.close();
  }
}

/** request/response × batch: each request of a batch is answered, with an empty reply. */
export async function requestToBatch(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rpc-batch');
  @Controller()
  class Batch {
    @BabelHandler('urn:comp:rpc-batch', { batch: { maxMessages: 2, maxWaitMs: 100 } })
    handle(@Payload() items: unknown[]) {
      return items.length;
    }
  }
  const service = await startService([Batch], { client: env.client, topics: topic });
  try {
    await withCaller(env, topic, async (caller) => {
      const send = (n: number) => lastValueFrom(caller.send('urn:comp:rpc-batch', { n }).pipe(toArray()));
      await expect(Promise.all([send(1), send(2)])).resolves.toEqual([[], []]);
    });
  } finally {
    await service.close();
  }
}

/**
 * request/response × handler settings from configuration: `handlers` makes the subscription Failover with one
 * attempt, so a failing request is dead-lettered, and answered with its error, at once.
 */
export async function requestWithHandlerSettings(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rpc-settings');
  let calls = 0;
  @Controller()
  class Refusing {
    @BabelHandler('urn:comp:rpc-settings', { maxAttempts: 5 })
    handle() {
      calls += 1;
      throw new TypeError('no stock');
    }
  }
  const service = await startService([Refusing], {
    client: env.client,
    topics: topic,
    handlers: { 'Refusing.handle': { subscriptionType: 'Failover', maxAttempts: 1 } },
  });
  try {
    expect(service.server.describe()).toEqual([expect.objectContaining({ topic })]);
    await withCaller(env, topic, async (caller) => {
      await expect(lastValueFrom(caller.send('urn:comp:rpc-settings', {}))).rejects.toMatchObject({
        name: 'RequestFailedError',
        errorClass: 'TypeError',
        message: 'no stock',
      });
    });
    expect(calls).toBe(1);
    expect(actions(service.settled)).toEqual(['dead-letter']);
  } finally {
    await service.close();
  }
}

/**
 * retry 'retry-topic' × topicsPattern × pause: a found topic gets its own retry topic (which no pattern finds),
 * and pausing the subscription holds the retry copies too.
 */
export async function retryTopicWithPatternAndPause(env: CompositionEnv): Promise<void> {
  const prefix = env.prefix('comp-rtopic');
  const handled: Array<[string, number, number]> = [];
  @Controller()
  class Found {
    @BabelHandler('urn:comp:rtopic', { topicsPattern: `${prefix}-.+`, patternDiscoveryMs: 100, subscription: 'rt' })
    handle(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
      handled.push([ctx.getTopic(), data.n, ctx.getAttempts()]);
      if (ctx.getAttempts() === 0) ctx.retry({ delayMs: data.n === 2 ? 600 : 0 });
    }
  }
  const service = await startService([Found], {
    client: env.client,
    topics: `${prefix}-unused`,
    retry: 'retry-topic',
  });
  try {
    await publish(env.client, `${prefix}-a`, 'urn:comp:rtopic', { n: 1 });
    await until('n=1 retried and handled', () => service.settled.length === 2);
    expect(actions(service.settled)).toEqual(['retry', 'ack']);
    // Discovery ran again since the retry topic was made: it found the topic, never its retry topic.
    await sleep(300);
    expect(service.server.describe().map(({ topic, subscription }) => `${topic}|${subscription}`)).toEqual([
      `${full(`${prefix}-a`)}|rt`,
      `${full(`${prefix}-a`)}.rt.retry|rt`,
    ]);
    await publish(env.client, `${prefix}-a`, 'urn:comp:rtopic', { n: 2 });
    await until('n=2 retried', () => service.settled.length === 3);
    await service.server.pause();
    expect(service.server.describe().map(({ paused }) => paused)).toEqual([true, true]);
    // The copy came due on the retry topic while paused: it waits for resume().
    await sleep(900);
    expect(handled.filter(([, n]) => n === 2)).toEqual([[`${prefix}-a`, 2, 0]]);
    service.server.resume();
    await until('n=2 handled after resume', () => service.settled.length === 4);
    expect(handled).toEqual([
      [`${prefix}-a`, 1, 0],
      [`${prefix}-a`, 1, 1],
      [`${prefix}-a`, 2, 0],
      [`${prefix}-a`, 2, 1],
    ]);
    expect(new Set(service.settled.map((event) => event.topic))).toEqual(new Set([full(`${prefix}-a`)]));
  } finally {
    await service.close();
  }
}

/** retry 'retry-topic' × batch × ctx.retry(): a member's retry comes back from the retry topic into a batch. */
export async function retryTopicBatchRetry(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rtbatch');
  const handled: Array<[string, number, number]> = [];
  @Controller()
  class Batch {
    @BabelHandler('urn:comp:rtbatch', { batch: { maxMessages: 2, maxWaitMs: 200 } })
    handle(@Payload() items: Array<{ n: number }>, @Ctx() ctx: BabelBatchContext) {
      items.forEach((item, index) => {
        const member = ctx.getMessage(index);
        handled.push([member.getTopic(), item.n, member.getAttempts()]);
        if (item.n === 2 && member.getAttempts() === 0) member.retry();
      });
    }
  }
  const service = await startService([Batch], { client: env.client, topics: topic, retry: 'retry-topic' });
  try {
    await publish(env.client, topic, 'urn:comp:rtbatch', { n: 1 });
    await publish(env.client, topic, 'urn:comp:rtbatch', { n: 2 });
    await until('three settled', () => service.settled.length === 3);
    expect(actions(service.settled).sort()).toEqual(['ack', 'ack', 'retry']);
    expect(handled.sort()).toEqual([
      [topic, 1, 0],
      [topic, 2, 0],
      [topic, 2, 1],
    ]);
  } finally {
    await service.close();
  }
}

/**
 * retry 'retry-topic' × Failover: the retry topic is consumed through the same Failover subscription; an immediate
 * retry goes through it, a delayed one is refused as on the topic itself.
 */
export async function retryTopicOnFailover(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-rtfail');
  const attempts: Array<[number, number]> = [];
  const errors: string[] = [];
  @Controller()
  class Failing {
    @BabelHandler('urn:comp:rtfail')
    handle(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
      attempts.push([data.n, ctx.getAttempts()]);
      if (ctx.getAttempts() === 0) ctx.retry(data.n === 2 ? { delayMs: 1000 } : {});
    }
  }
  const service = await startService([Failing], {
    client: env.client,
    topics: topic,
    subscriptionType: 'Failover',
    retry: 'retry-topic',
    onError: (error) => void errors.push(error.name),
  });
  try {
    expect(service.server.describe().map(({ topic: reads }) => reads)).toEqual([topic, `${topic}.babelqueue.retry`]);
    await publish(env.client, topic, 'urn:comp:rtfail', { n: 1 });
    await until('n=1 retried and handled', () => service.settled.length === 2);
    await publish(env.client, topic, 'urn:comp:rtfail', { n: 2 });
    await until('n=2 settled', () => service.settled.length === 3);
    expect(attempts).toEqual([
      [1, 0],
      [1, 1],
      [2, 0],
    ]);
    expect(actions(service.settled)).toEqual(['retry', 'ack', 'dead-letter']);
    expect(errors).toEqual(['RetryRequestedError', 'SettleRequestRefusedError']);
  } finally {
    await service.close();
  }
}

/**
 * concurrency × pause() × order (Failover): messages that reached the consumer while the only slot was busy (on the
 * native client they wait in the consumer, the listener not held) are not handled while paused, and are handled
 * once each, in the order they came, on resume.
 */
export async function waitingForSlotWithPause(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-wait');
  const seen: number[] = [];
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  @Controller()
  class Slow {
    @BabelHandler('urn:comp:wait')
    async handle(@Payload() data: { n: number }) {
      seen.push(data.n);
      if (data.n === 0) await gate;
    }
  }
  const service = await startService([Slow], {
    client: env.client,
    topics: topic,
    subscriptionType: 'Failover',
    concurrency: 1,
  });
  try {
    for (let n = 0; n < 6; n++) await publish(env.client, topic, 'urn:comp:wait', { n });
    await until('the first one running', () => seen.length === 1);
    await sleep(300); // the others reach the consumer meanwhile
    const paused = service.server.pause();
    open();
    await paused;
    await sleep(300);
    expect(seen).toEqual([0]);
    service.server.resume();
    await until('every message settled', () => service.settled.length === 6);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(actions(service.settled)).toEqual(Array(6).fill('ack'));
  } finally {
    await service.close();
  }
}

/**
 * circuit breaker × pause() / resume(): two reasons to wait. A resume() by hand while the breaker holds the
 * subscription leaves it held (no attempt is used up); a pause() by hand outlasts the breaker's own resume (no probe
 * runs while paused); once neither holds, the probe closes the breaker and every message is handled, none
 * dead-lettered.
 */
export async function breakerWithPause(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-breaker');
  const handled = new Set<number>();
  let down = true;
  let calls = 0;
  @Controller()
  class Charges {
    @BabelHandler('urn:comp:breaker')
    charge(@Payload() data: { n: number }) {
      calls += 1;
      if (down) throw new Error('the dependency is down');
      handled.add(data.n);
    }
  }
  const service = await startService([Charges], {
    client: env.client,
    topics: topic,
    maxAttempts: 5,
    circuitBreaker: { failureRatio: 0.5, windowMs: 60_000, minimumMessages: 3, openMs: 1_500, probes: 1 },
  });
  const tripped = () => service.server.describe().some((state) => state.tripped);
  try {
    for (let n = 0; n < 6; n++) await publish(env.client, topic, 'urn:comp:breaker', { n });
    await until('the breaker trips', tripped);
    const callsAtTrip = calls;
    service.server.resume(); // by hand, while the breaker holds
    await sleep(600);
    expect(calls).toBe(callsAtTrip);
    await service.server.pause();
    down = false;
    await sleep(1_500); // the breaker's wait ends: it would probe, but the subscription is paused by hand
    expect(calls).toBe(callsAtTrip);
    service.server.resume();
    await until('every message handled', () => handled.size === 6, 15_000);
    await until('the breaker closes', () => !tripped(), 15_000);
    expect(service.settled.filter((event) => event.action === 'dead-letter')).toEqual([]);
  } finally {
    await service.close();
  }
}

/**
 * ordering 'key' × ctx.retry({ delayMs }) × pause(): a message that asks for a delayed retry is retried in place,
 * before its key's later messages, while the other key goes on; a pause() by hand while it waits out its delay holds
 * every key, and after resume() each key's messages end in the order they were published, none dead-lettered.
 */
export async function keyOrderWithRetryAndPause(env: CompositionEnv): Promise<void> {
  const topic = env.prefix('comp-key-order');
  const ended: Record<string, number[]> = { a: [], b: [] };
  let retried = false;
  @Controller()
  class Ledger {
    @BabelHandler('urn:comp:ledger')
    post(@Payload() data: { key: string; seq: number }, @Ctx() ctx: BabelContext) {
      if (data.key === 'a' && data.seq === 1 && !retried) {
        retried = true;
        ctx.retry({ delayMs: 400 });
        return;
      }
      ended[data.key]!.push(data.seq);
    }
  }
  const service = await startService([Ledger], {
    client: env.client,
    topics: topic,
    concurrency: 4,
    ordering: 'key',
    maxAttempts: 3,
  });
  try {
    for (let seq = 0; seq < 4; seq++)
      for (const key of ['a', 'b']) await publish(env.client, topic, 'urn:comp:ledger', { key, seq }, undefined, key);
    await until('the retry asked for', () => retried);
    await service.server.pause();
    const whilePaused = ended.a.length + ended.b.length;
    await sleep(600); // the retry's delay passes while paused: it waits for resume()
    expect(ended.a.length + ended.b.length).toBe(whilePaused);
    service.server.resume();
    await until('every message handled', () => ended.a.length === 4 && ended.b.length === 4, 15_000);
    expect(ended).toEqual({ a: [0, 1, 2, 3], b: [0, 1, 2, 3] });
    expect(service.settled.filter((event) => event.action === 'dead-letter')).toEqual([]);
  } finally {
    await service.close();
  }
}

/** Every scenario, by name, for the kit and the broker suites. */
export const compositionScenarios = {
  'topicsPattern × consumerOptions': patternWithConsumerOptions,
  'topicsPattern × pause': patternWithPause,
  'listen twice / concurrent × topic and topicsPattern': listenTwice,
  "Nest's processing hooks × handler failures": processingHooks,
  'concurrency × handler time-outs': overdueHandlersKeepSlots,
  'batch × time-out × late fail(i)': lateBatchFail,
  'settle request × subscription type (Failover)': refusedDelayedRetry,
  'topicsPattern × batch × ctx.retry()': patternBatchRetry,
  'topicsPattern × idempotency': patternWithIdempotency,
  'request/response × handler time-out': requestPastTimeout,
  'request/response × pause': requestWhilePaused,
  'request/response × idempotency': requestWithIdempotency,
  'request/response × batch': requestToBatch,
  'request/response × handler settings (Failover, one attempt)': requestWithHandlerSettings,
  "retry 'retry-topic' × topicsPattern × pause": retryTopicWithPatternAndPause,
  "retry 'retry-topic' × batch × ctx.retry()": retryTopicBatchRetry,
  "retry 'retry-topic' × subscription type (Failover)": retryTopicOnFailover,
  'concurrency × pause × order (messages waiting for a slot)': waitingForSlotWithPause,
  'circuit breaker × pause / resume by hand': breakerWithPause,
  "ordering 'key' × ctx.retry({ delayMs }) × pause": keyOrderWithRetryAndPause,
} satisfies Record<string, (env: CompositionEnv) => Promise<void>>;
