// The testing kit stands in for the outbox's schedules: an app whose module has an outbox with schedules (a pg
// Pool that points nowhere) runs under useInMemoryPulsar with no database. BabelOutbox.schedule(tx, …) inside the
// app's own transaction code and @BabelSchedule on a handler fire through the app's handlers on pulsar.advance(ms).
import 'reflect-metadata';
import { Controller, Injectable, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import pg from 'pg';
import { BabelContext, BabelHandler, BabelOutbox, BabelQueueModule } from '../../../lib/index.js';
import { BabelSchedule, SCHEDULE_PROPERTIES, type OutboxSqlRunner } from '../../../lib/outbox/index.js';
import { quietLogger, startUnderKit } from '../../support/nest-app.js';

const REMIND = 'urn:babel:orders:payment-reminder';
const NIGHTLY = 'urn:babel:reports:nightly';
const PLACED = 'urn:babel:orders:placed';
const seen: Array<{ urn: string; data: unknown; tick?: string; id?: string }> = [];

/** What a business transaction looks like to the app: under the kit nothing reaches a database. */
const transaction: OutboxSqlRunner = {
  query: () => Promise.reject(new Error('no database in this test')),
};

@Injectable()
class OrdersService {
  constructor(private readonly outbox: BabelOutbox) {}

  async place(orderId: number): Promise<void> {
    await this.outbox.write(transaction, PLACED, { order_id: orderId }, { key: `order-${orderId}` });
    await this.outbox.schedule(
      transaction,
      REMIND,
      { order_id: orderId },
      {
        delay: 24 * 3600_000,
        id: `remind-${orderId}`,
      },
    );
  }

  paid(orderId: number): Promise<boolean> {
    return this.outbox.cancelSchedule(transaction, `remind-${orderId}`);
  }
}

/** What a handler saw: the URN, the data, and the schedule properties when a schedule fired it. */
function record(urn: string, data: unknown, ctx: BabelContext): void {
  const properties = ctx.getProperties();
  const tick = properties[SCHEDULE_PROPERTIES.tick];
  seen.push({ urn, data, ...(tick !== undefined && { tick, id: properties[SCHEDULE_PROPERTIES.id] }) });
}

@Controller()
class Handlers {
  @BabelHandler(REMIND)
  remind(@Payload() data: unknown, @Ctx() ctx: BabelContext): void {
    record(REMIND, data, ctx);
  }

  @BabelHandler(NIGHTLY)
  @BabelSchedule({ id: 'nightly-report', cron: '0 2 * * *', tz: 'Europe/Paris', data: { format: 'pdf' } })
  nightly(@Payload() data: unknown, @Ctx() ctx: BabelContext): void {
    record(NIGHTLY, data, ctx);
  }

  @BabelHandler(PLACED)
  placed(@Payload() data: unknown, @Ctx() ctx: BabelContext): void {
    record(PLACED, data, ctx);
  }
}

// As the app declares it for production: an outbox on PostgreSQL with schedules. The pool is never connected.
const database = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: 'pulsar://nowhere:6650',
      topic: 'orders',
      logger: quietLogger,
      outbox: { pool: database, migrate: true, schedules: true },
    }),
  ],
  controllers: [Handlers],
  providers: [OrdersService],
})
class AppModule {}

async function start() {
  const { pulsar, app } = await startUnderKit(AppModule);
  return { pulsar, app, orders: app.get(OrdersService), outbox: app.get(BabelOutbox) };
}

const parisHour = (iso: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', hourCycle: 'h23' }).format(
    new Date(iso),
  );
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

beforeEach(() => {
  seen.length = 0;
});
afterAll(() => database.end());

it('schedule(tx) in the app’s transaction code fires on advance(); a cancelled one never; write(tx) is published', async () => {
  const { pulsar, app, orders, outbox } = await start();
  try {
    await orders.place(1);
    await orders.place(2);
    expect(await orders.paid(2)).toBe(true);
    await settle();
    expect(seen.map((s) => s.urn)).toEqual([PLACED, PLACED]);
    expect((await outbox.listSchedules(transaction, { urn: REMIND })).map((s) => s.id)).toEqual(['remind-1']);

    pulsar.advance(24 * 3600_000);
    await settle();
    expect(seen.filter((s) => s.urn === REMIND)).toEqual([
      { urn: REMIND, data: { order_id: 1 }, tick: expect.any(String), id: 'remind-1' },
    ]);
    expect(await outbox.getSchedule(transaction, 'remind-1')).toMatchObject({ state: 'fired', fired: 1 });
    expect(await outbox.getSchedule(transaction, 'remind-2')).toMatchObject({ state: 'cancelled', fired: 0 });
    expect(pulsar.published('orders').find((m) => m.properties['bq-job'] === PLACED)?.partitionKey).toBe('order-1');
  } finally {
    await app.close();
  }
});

it('@BabelSchedule is declared at start and fires each tick advance() passes, on its time zone', async () => {
  const { pulsar, app, outbox } = await start();
  try {
    const declared = await outbox.getSchedule(transaction, 'nightly-report');
    expect(declared).toMatchObject({
      state: 'pending',
      cron: '0 2 * * *',
      tz: 'Europe/Paris',
      data: { format: 'pdf' },
    });
    pulsar.advance(3 * 24 * 3600_000);
    await settle();
    const nightly = seen.filter((s) => s.urn === NIGHTLY);
    expect(nightly).toHaveLength(3);
    expect(nightly.every((s) => s.id === 'nightly-report')).toBe(true);
    expect(nightly.map((s) => parisHour(s.tick!))).toEqual(['02', '02', '02']);
    expect(nightly[0]!.data).toEqual({ format: 'pdf' });
  } finally {
    await app.close();
  }
});

it('write(tx) with a delay waits for advance(); runScheduleNow makes a schedule due at the next advance()', async () => {
  const { pulsar, app, outbox } = await start();
  try {
    await outbox.write(transaction, PLACED, { order_id: 3 }, { delay: 60_000 });
    await settle();
    expect(seen).toEqual([]);
    pulsar.advance(60_000);
    await settle();
    expect(seen).toEqual([{ urn: PLACED, data: { order_id: 3 } }]);

    expect(await outbox.runScheduleNow(transaction, 'nightly-report')).toBe(true);
    pulsar.advance(0);
    await settle();
    expect(seen.filter((s) => s.urn === NIGHTLY)).toHaveLength(1);
  } finally {
    await app.close();
  }
});

it('declaring again under the kit keeps the next tick; a changed cron moves it; a cancelled one stays cancelled', async () => {
  const { app, outbox } = await start();
  try {
    const first = await outbox.declareSchedule(
      transaction,
      NIGHTLY,
      { v: 1 },
      { id: 'nightly-report', cron: '0 2 * * *', tz: 'Europe/Paris' },
    );
    expect(first.created).toBe(false); // @BabelSchedule stored it at start
    const moved = await outbox.declareSchedule(
      transaction,
      NIGHTLY,
      { v: 2 },
      { id: 'nightly-report', cron: '0 3 * * *', tz: 'Europe/Paris' },
    );
    expect(parisHour(moved.nextTick!.toISOString())).toBe('03');
    expect(moved.nextTick!.getTime()).toBeGreaterThan(first.nextTick!.getTime());
    expect((await outbox.getSchedule(transaction, 'nightly-report'))?.data).toEqual({ v: 2 });
    expect(await outbox.cancelSchedule(transaction, 'nightly-report')).toBe(true);
    const again = await outbox.declareSchedule(transaction, NIGHTLY, {}, { id: 'nightly-report', cron: '0 4 * * *' });
    expect(again.nextTick).toBeNull();
  } finally {
    await app.close();
  }
});

it('what is written while the kit’s broker is unavailable waits, as a row waits in the outbox', async () => {
  const { pulsar, app, outbox } = await start();
  try {
    pulsar.setAvailable(false);
    await outbox.write(transaction, PLACED, { order_id: 4 });
    pulsar.setAvailable(true);
    await settle();
    expect(seen).toEqual([]);
    pulsar.advance(0);
    await settle();
    expect(seen).toEqual([{ urn: PLACED, data: { order_id: 4 } }]);
  } finally {
    await app.close();
  }
});
