// The testing kit's schedules: an app's BabelPulsarClient schedules with no database under useInMemoryPulsar, and
// pulsar.advance(ms) fires what is due through the app's own handlers.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { SCHEDULE_PROPERTIES } from '../../../lib/outbox/index.js';
import { quietLogger, startUnderKit } from '../../support/nest-app.js';

const REMIND = 'urn:babel:orders:payment-reminder';
const REPORT = 'urn:babel:reports:hourly';
const seen: Array<{ urn: string; data: unknown; tick: string | undefined; id: string | undefined }> = [];

@Controller()
class Handlers {
  @BabelHandler(REMIND)
  remind(@Payload() data: unknown, @Ctx() ctx: BabelContext): void {
    const properties = ctx.getProperties();
    seen.push({
      urn: REMIND,
      data,
      tick: properties[SCHEDULE_PROPERTIES.tick],
      id: properties[SCHEDULE_PROPERTIES.id],
    });
  }

  @BabelHandler(REPORT)
  report(@Ctx() ctx: BabelContext): void {
    seen.push({ urn: REPORT, data: {}, tick: ctx.getProperties()[SCHEDULE_PROPERTIES.tick], id: 'hourly' });
  }
}

@Module({
  imports: [BabelQueueModule.forRoot({ serviceUrl: 'pulsar://nowhere:6650', topic: 'orders', logger: quietLogger })],
  controllers: [Handlers],
})
class AppModule {}

async function start() {
  const { pulsar, app } = await startUnderKit(AppModule);
  return { pulsar, app, babel: app.get(BabelPulsarClient) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

beforeEach(() => {
  seen.length = 0;
});

it('a one-off schedule fires when advance() passes its time, once; a cancelled one never', async () => {
  const { pulsar, app, babel } = await start();
  try {
    const handle = await babel.schedule(REMIND, { order_id: 7 }, { delay: 15 * 60_000, id: 'remind-7' });
    expect(handle).toMatchObject({ id: 'remind-7', created: true });
    expect((await babel.schedule(REMIND, { order_id: 7 }, { delay: 1, id: 'remind-7' })).created).toBe(false);
    await babel.schedule(REMIND, { order_id: 8 }, { delay: 15 * 60_000, id: 'remind-8' });
    expect(await babel.cancelSchedule('remind-8')).toBe(true);
    expect((await babel.listSchedules()).map((s) => s.id)).toEqual(['remind-7']);

    pulsar.advance(14 * 60_000);
    await settle();
    expect(seen).toEqual([]);
    pulsar.advance(60_000);
    await settle();
    expect(seen).toEqual([
      { urn: REMIND, data: { order_id: 7 }, tick: handle.nextTick!.toISOString(), id: 'remind-7' },
    ]);
    pulsar.advance(60 * 60_000);
    await settle();
    expect(seen).toHaveLength(1);
    expect(await babel.getSchedule('remind-7')).toMatchObject({ state: 'fired', fired: 1 });
    expect(await babel.getSchedule('remind-8')).toMatchObject({ state: 'cancelled', fired: 0 });
  } finally {
    await app.close();
  }
});

it('a recurring schedule fires every tick advance() passes, on its time zone', async () => {
  const { pulsar, app, babel } = await start();
  try {
    await babel.schedule(REPORT, {}, { cron: '0 * * * *', tz: 'Asia/Kolkata', id: 'hourly' });
    pulsar.advance(3 * 3600_000);
    await settle();
    expect(seen).toHaveLength(3);
    // Kolkata is UTC+05:30: its full hours are half past in UTC.
    expect(seen.map((s) => new Date(s.tick!).getUTCMinutes())).toEqual([30, 30, 30]);
    expect((await babel.getSchedule('hourly'))?.fired).toBe(3);
  } finally {
    await app.close();
  }
});
