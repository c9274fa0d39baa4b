// Pairs of features that meet in one subscription, as scenarios that run unchanged on the testing kit and on the
// real broker (both clients): a feature is done when it works with the others, not only alone.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelBatchContext,
  BabelContext,
  BabelHandler,
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
) {
  const envelope = EnvelopeCodec.make(urn, data, { queue: topic, ...(id !== undefined && { id }) });
  const producer = await client.createProducer({ topic });
  try {
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
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
  @Module({ controllers: [Hooked] })
  class HookedModule {}
  const server = new BabelPulsarServer({ client: env.client, topics: topic, logger: quietLogger, maxAttempts: 1 });
  server.setOnProcessingStartHook((_transport, context, done) =>
    store.run(`urn ${(context as BabelContext).getUrn()}`, done),
  );
  server.setOnProcessingEndHook((transport, context) => {
    expect(transport).toBe(server.transportId);
    ends.push((context as BabelContext).getUrn());
  });
  const settled: SettledEvent[] = [];
  server.on('settled', (event) => settled.push(event));
  const app = await NestFactory.createMicroservice(HookedModule, { strategy: server, logger: false });
  try {
    await app.listen();
    for (let n = 1; n <= 5; n++) await publish(env.client, topic, 'urn:comp:hooks', { n });
    await until('five settled', () => settled.length === 5);
    expect(inHandler).toEqual(Array.from({ length: 5 }, () => 'urn urn:comp:hooks'));
    expect(ends).toHaveLength(5);
    expect(actions(settled).sort()).toEqual(['ack', 'ack', 'ack', 'ack', 'dead-letter']);
  } finally {
    await app.close();
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
  'concurrency × pause × order (messages waiting for a slot)': waitingForSlotWithPause,
} satisfies Record<string, (env: CompositionEnv) => Promise<void>>;
