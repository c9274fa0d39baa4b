// The inbox's semantics on the in-memory inbox: alone, and in a module-built app on the testing kit.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import {
  BabelContext,
  BabelHandler,
  BabelPulsarServer,
  BabelQueueModule,
  type SettledEvent,
} from '../../../lib/index.js';
import { InMemoryInbox } from '../../../lib/inbox/index.js';
import { BabelQueueTestHarness, InMemoryPulsar, useInMemoryPulsar } from '../../../lib/testing/index.js';

describe('InMemoryInbox', () => {
  test('an id runs once per subscription; another subscription runs it too; no id runs every time', async () => {
    const inbox = new InMemoryInbox();
    let runs = 0;
    const work = async () => void runs++;
    expect(await inbox.run('billing', 'a', work)).toBe('ran');
    expect(await inbox.run('billing', 'a', work)).toBe('duplicate');
    expect(await inbox.run('shipping', 'a', work)).toBe('ran');
    expect(await inbox.run('billing', undefined, work)).toBe('ran');
    expect(await inbox.run('billing', undefined, work)).toBe('ran');
    expect(runs).toBe(4);
    expect(inbox.has('billing', 'a')).toBe(true);
  });

  test('a handler that throws leaves nothing: no record, no follow-up; its retry runs and publishes once', async () => {
    const forwarded: string[] = [];
    const inbox = new InMemoryInbox({ publish: async (urn) => void forwarded.push(urn) });
    const failing = inbox.run('billing', 'a', async (tx) => {
      await tx.publish('urn:babel:invoices:created', { n: 1 });
      throw new Error('boom');
    });
    await expect(failing).rejects.toThrow('boom');
    expect(inbox.has('billing', 'a')).toBe(false);
    expect(inbox.followUps).toEqual([]);
    expect(
      await inbox.run('billing', 'a', async (tx) => void (await tx.publish('urn:babel:invoices:created', { n: 2 }))),
    ).toBe('ran');
    expect(inbox.followUps.map((followUp) => followUp.data)).toEqual([{ n: 2 }]);
    expect(forwarded).toEqual(['urn:babel:invoices:created']);
  });

  test('two copies at once: one runs, the other waits for it and skips; after a rollback the waiting one runs', async () => {
    const inbox = new InMemoryInbox();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const runs: string[] = [];
    const first = inbox.run('billing', 'a', async () => {
      runs.push('first');
      await gate;
    });
    const second = inbox.run('billing', 'a', async () => void runs.push('second'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toEqual(['first']);
    open();
    expect(await Promise.all([first, second])).toEqual(['ran', 'duplicate']);

    let fail!: () => void;
    const failing = new Promise<void>((_resolve, reject) => (fail = () => reject(new Error('rolled back'))));
    const third = inbox.run('billing', 'b', () => failing);
    const fourth = inbox.run('billing', 'b', async () => void runs.push('fourth'));
    fail();
    await expect(third).rejects.toThrow('rolled back');
    expect(await fourth).toBe('ran');
    expect(runs).toEqual(['first', 'fourth']);
  });

  test('its transaction is the one given; without one, a query says so', async () => {
    await new InMemoryInbox().run('s', 'a', async (tx) => {
      await expect(tx.client.query('SELECT 1')).rejects.toThrow(/InMemoryInbox has no database/);
    });
    const fake = { query: async () => ({ rows: [] }) };
    await new InMemoryInbox({ transaction: fake }).run('s', 'a', async (tx) => expect(tx.client).toBe(fake));
  });
});

describe('an inbox app on the testing kit', () => {
  const URN = 'urn:babel:orders:created';

  async function start(inbox: InMemoryInbox, behaviour: (n: number, ctx: BabelContext) => Promise<void>) {
    @Controller()
    class Orders {
      @BabelHandler(URN)
      async created(@Payload('n') n: number, @Ctx() ctx: BabelContext) {
        await behaviour(n, ctx);
      }
    }
    @Module({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl: 'pulsar://localhost:6650',
          topic: 'orders',
          consumer: { maxAttempts: 3 },
          inbox: { store: inbox, every: true },
        }),
      ],
      controllers: [Orders],
    })
    class AppModule {}
    const pulsar = new InMemoryPulsar();
    const moduleRef = await useInMemoryPulsar(Test.createTestingModule({ imports: [AppModule] }), pulsar).compile();
    const server = moduleRef.get(BabelPulsarServer);
    const settled: SettledEvent[] = [];
    server.on('settled', (event) => settled.push(event));
    const app = moduleRef.createNestMicroservice({ strategy: server, logger: false });
    await app.listen();
    const harness = await BabelQueueTestHarness.attach(server, pulsar);
    return { app, harness, settled, pulsar };
  }

  test('a redelivered id is acknowledged without running (settled as a duplicate); follow-ups only for committed work', async () => {
    const inbox = new InMemoryInbox();
    const handled: number[] = [];
    const { app, harness, settled } = await start(inbox, async (n, ctx) => {
      handled.push(n);
      if (ctx.getAttempts() === 0 && n === 2) throw new Error('fails once');
      await ctx.publish('urn:babel:invoices:requested', { n });
    });
    try {
      const until = async (count: number) => {
        for (let i = 0; i < 200 && settled.filter((e) => e.action === 'ack').length < count; i++)
          await new Promise((resolve) => setTimeout(resolve, 5));
      };
      await harness.publish(URN, { n: 1 }, { id: 'id-1' });
      await until(1);
      await harness.publish(URN, { n: 1 }, { id: 'id-1' }); // a redelivered copy
      await until(2);
      await harness.publish(URN, { n: 2 }, { id: 'id-2' }); // fails once, then runs
      await until(3);
      expect(handled).toEqual([1, 2, 2]);
      expect(settled.map((e) => [e.action, e.duplicate === true])).toEqual([
        ['ack', false],
        ['ack', true],
        ['retry', false],
        ['ack', false],
      ]);
      expect(inbox.followUps.map((followUp) => followUp.data)).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await harness.close();
      await app.close();
    }
  });

  test('ctx.getTransaction() and ctx.publish() outside an inbox handler say where they work', async () => {
    const ctx = new BabelContext([{} as never, {} as never, 'orders', URN]);
    expect(() => ctx.getTransaction()).toThrow(/only in an inbox handler/);
    return expect(ctx.publish(URN, {})).rejects.toThrow(/only in an inbox handler/);
  });
});

describe('which handlers the inbox runs', () => {
  const URN_A = 'urn:babel:orders:a';
  const URN_B = 'urn:babel:orders:b';
  const URN_C = 'urn:babel:orders:c';

  test('without every: those with inbox: true, by the decorator or the handlers option', async () => {
    const inbox = new InMemoryInbox();
    const inTransaction: Record<string, boolean> = {};
    const probe = (name: string, ctx: BabelContext) => {
      try {
        ctx.getTransaction();
        inTransaction[name] = true;
      } catch {
        inTransaction[name] = false;
      }
    };
    @Controller()
    class Orders {
      @BabelHandler(URN_A, { inbox: true })
      a(@Ctx() ctx: BabelContext) {
        probe('a', ctx);
      }
      @BabelHandler(URN_B)
      b(@Ctx() ctx: BabelContext) {
        probe('b', ctx);
      }
      @BabelHandler(URN_C)
      c(@Ctx() ctx: BabelContext) {
        probe('c', ctx);
      }
    }
    @Module({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl: 'pulsar://localhost:6650',
          topic: 'orders',
          consumer: { handlers: { 'Orders.c': { inbox: true } } },
          inbox: { store: inbox },
        }),
      ],
      controllers: [Orders],
    })
    class AppModule {}
    const pulsar = new InMemoryPulsar();
    const moduleRef = await useInMemoryPulsar(Test.createTestingModule({ imports: [AppModule] }), pulsar).compile();
    const server = moduleRef.get(BabelPulsarServer);
    const app = moduleRef.createNestMicroservice({ strategy: server, logger: false });
    await app.listen();
    const harness = await BabelQueueTestHarness.attach(server, pulsar);
    try {
      for (const urn of [URN_A, URN_B, URN_C])
        expect((await (await harness.publish(urn, {})).outcome()).kind).toBe('handled');
      expect(inTransaction).toEqual({ a: true, b: false, c: true });
    } finally {
      await harness.close();
      await app.close();
    }
  });

  test('a handler that asks for the inbox on a server without one fails the start, naming it', async () => {
    @Controller()
    class Lonely {
      @BabelHandler(URN_A, { inbox: true })
      a() {}
    }
    @Module({
      imports: [BabelQueueModule.forRoot({ serviceUrl: 'pulsar://localhost:6650', topic: 'orders' })],
      controllers: [Lonely],
    })
    class AppModule {}
    const moduleRef = await useInMemoryPulsar(
      Test.createTestingModule({ imports: [AppModule] }),
      new InMemoryPulsar(),
    ).compile();
    const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
    await expect(app.listen()).rejects.toThrow(/Lonely.a asks for the inbox, but the server has none/);
    await app.close();
  });
});
