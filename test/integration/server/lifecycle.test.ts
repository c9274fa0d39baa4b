// Start-up, concurrency, graceful shutdown and hybrid apps, against the real broker.
import { jest } from '@jest/globals';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  BabelPulsarServer,
  BabelQueueModule,
  EnvelopeCodec,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { backlog, newClient, serviceUrl, sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';
import { quietLogger, startService } from '../../support/nest-app.js';

jest.setTimeout(90_000);

let client: PulsarClientLike;
beforeAll(() => {
  client = newClient();
});
afterAll(async () => {
  await client.close();
});

async function publishMany(topic: string, urn: string, count: number): Promise<string[]> {
  const producer = await client.createProducer({ topic });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const envelope = EnvelopeCodec.make(urn, { n: i }, { queue: topic });
    ids.push(envelope.meta.id);
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  }
  await producer.close();
  return ids;
}

describe('BabelPulsarServer lifecycle (real broker)', () => {
  it('handles 8 messages at once with concurrency 8, and never more', async () => {
    const topic = uniqueTopic('conc');
    let active = 0;
    let peak = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handled: number[] = [];
    @Controller()
    class Work {
      @BabelHandler('urn:babel:work:do')
      async work(@Payload() data: { n: number }) {
        active += 1;
        peak = Math.max(peak, active);
        await gate;
        await sleep(20);
        handled.push(data.n);
        active -= 1;
      }
    }
    const service = await startService([Work], { client, topics: topic, concurrency: 8 });
    try {
      await publishMany(topic, 'urn:babel:work:do', 20);
      await waitFor('8 handlers running', () => active === 8);
      await sleep(500); // room for a ninth to start, if the bound leaked
      expect(active).toBe(8);
      release();
      await waitFor('all 20 handled', () => handled.length === 20);
      expect(peak).toBe(8);
      expect(new Set(handled).size).toBe(20);
      await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    } finally {
      await service.close();
    }
  });

  it('loses nothing when shut down while handlers run: every message is handled or redelivered', async () => {
    const topic = uniqueTopic('shutdown');
    const handled = new Set<string>();
    let started = 0;
    @Controller()
    class Slow {
      @BabelHandler('urn:babel:work:slow')
      async slow(@Ctx() ctx: BabelContext) {
        started += 1;
        await sleep(400);
        handled.add(ctx.getEnvelope().meta.id);
      }
    }
    const first = await startService([Slow], { client, topics: topic, concurrency: 3, shutdownTimeoutMs: 100 });
    let ids: string[];
    try {
      ids = await publishMany(topic, 'urn:babel:work:slow', 12);
      await waitFor('handlers running', () => started >= 3);
    } finally {
      await first.close(); // in-flight handlers outlive the 100 ms budget: left unacknowledged
    }
    const afterFirst = handled.size;
    expect(afterFirst).toBeLessThan(12);
    const second = await startService([Slow], { client, topics: topic, concurrency: 3 });
    try {
      await waitFor('every message handled', () => ids.every((id) => handled.has(id)), 30_000);
      await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
    } finally {
      await second.close();
    }
  });

  it('waits for in-flight handlers within shutdownTimeoutMs and acknowledges them', async () => {
    const topic = uniqueTopic('drain');
    let finished = 0;
    @Controller()
    class Slow {
      @BabelHandler('urn:babel:work:slow')
      async slow() {
        await sleep(300);
        finished += 1;
      }
    }
    const service = await startService([Slow], { client, topics: topic, concurrency: 2, shutdownTimeoutMs: 5000 });
    await publishMany(topic, 'urn:babel:work:slow', 2);
    await waitFor('two running', () => service.server.describe()[0]!.active === 2);
    await service.close();
    expect(finished).toBe(2);
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0);
  });

  it('runs in a hybrid app (HTTP + microservice) and reports its status', async () => {
    const topic = uniqueTopic('hybrid');
    const seen: string[] = [];
    @Controller()
    class Orders {
      @BabelHandler('urn:babel:orders:created')
      created(@Ctx() ctx: BabelContext) {
        seen.push(ctx.getTraceId());
      }
    }
    // The hybrid app as users build it: the module from a service URL, its server connected as the microservice.
    @Module({
      imports: [BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, logger: quietLogger })],
      controllers: [Orders],
    })
    class AppModule {}
    const app = await NestFactory.create(AppModule, { logger: false });
    const server = app.get(BabelPulsarServer);
    const statuses: string[] = [];
    server.status.subscribe((status) => statuses.push(status));
    app.connectMicroservice({ strategy: server });
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    try {
      expect(statuses).toEqual(['connected']);
      const envelope = EnvelopeCodec.make('urn:babel:orders:created', {}, { queue: topic, traceId: 'trace-hybrid' });
      const producer = await client.createProducer({ topic });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
      await producer.close();
      await waitFor('the handler', () => seen.length === 1);
      expect(seen).toEqual(['trace-hybrid']);
    } finally {
      await app.close();
    }
    expect(statuses).toEqual(['connected', 'closed']);
    await server.close(); // idempotent
  });

  it('refuses two handlers for one URN at start-up, naming both', async () => {
    @Controller()
    class First {
      @BabelHandler('urn:babel:dup')
      one() {}
    }
    @Controller()
    class Second {
      @BabelHandler('urn:babel:dup')
      two() {}
    }
    const topic = uniqueTopic('dup');
    await expect(startService([First, Second], { client, topics: topic })).rejects.toThrow(
      /two handlers for urn:babel:dup.*First\.one.*Second\.two/,
    );
  });

  it('calls back with the error when a subscription cannot be made, and reports disconnected', async () => {
    const server = new BabelPulsarServer({
      client,
      topics: 'persistent://no-such-tenant/ns/topic',
      logger: quietLogger,
    });
    const statuses: string[] = [];
    server.status.subscribe((status) => statuses.push(status));
    const error = await new Promise<unknown>((resolve) => server.listen(resolve));
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/no-such-tenant/);
    expect(statuses).toEqual(['disconnected']);
    await server.close();
  });

  it('reports reconnecting while the broker is unreachable, then connected, and keeps consuming', async () => {
    const { hostname, port } = new URL(webUrl());
    const proxy = new TcpProxy(hostname, Number(port));
    await proxy.start();
    const flaky = new PulsarWebSocketClient({
      serviceUrl: proxy.url,
      reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
    });
    const topic = uniqueTopic('status');
    const seen: string[] = [];
    @Controller()
    class Orders {
      @BabelHandler('urn:babel:orders:created')
      created(@Ctx() ctx: BabelContext) {
        seen.push(ctx.getEnvelope().meta.id);
      }
    }
    const service = await startService([Orders], { client: flaky, topics: topic });
    const statuses: string[] = [];
    service.server.status.subscribe((status) => statuses.push(status));
    try {
      proxy.pause();
      proxy.dropAll();
      await waitFor('reconnecting', () => statuses.includes('reconnecting'));
      proxy.resume();
      await waitFor('connected again', () => statuses.at(-1) === 'connected' && statuses.length >= 3);
      const [id] = await publishMany(topic, 'urn:babel:orders:created', 1);
      await waitFor('the message after the reconnect', () => seen.includes(id!));
      expect(statuses.slice(0, 3)).toEqual(['connected', 'reconnecting', 'connected']);
    } finally {
      await service.close();
      await flaky.close();
      await proxy.stop();
    }
  });
});
