// One app instance of the multi-instance schedule run (test/integration/outbox/schedules-instances.test.ts),
// started as a child process by scripts/lib/scale-run.mjs. Built the way users build it: BabelQueueModule.forRoot
// with a service URL and an outbox on PostgreSQL with schedules, and a @BabelSchedule every second on the
// @BabelHandler that handles it. Each delivery is reported as one JSON line on stdout before the handler returns,
// so everything acknowledged has been reported even when the process is killed.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import pg from 'pg';
import { BabelContext, BabelHandler, BabelQueueModule } from '../../../lib/index.js';
import { BabelSchedule, SCHEDULE_PROPERTIES } from '../../../lib/outbox/index.js';
import { env, runInstance, silentLogger } from './run-instance.js';
import { SCHEDULE_URN, type ScheduleRecord } from './records.js';

const instance = env('SCALE_INSTANCE');
const report = (record: ScheduleRecord): void => {
  process.stdout.write(`${JSON.stringify(record)}\n`);
};
const pool = new pg.Pool({ connectionString: env('SCALE_DATABASE_URL'), max: 4, application_name: instance });

@Controller()
class EverySecondHandler {
  @BabelHandler(SCHEDULE_URN)
  @BabelSchedule({ id: env('SCALE_SCHEDULE_ID'), cron: '* * * * * *' })
  tick(@Ctx() ctx: BabelContext): void {
    const properties = ctx.getProperties();
    report({
      t: 'handled',
      instance,
      at: Date.now(),
      publishedAt: ctx.getMessage().getPublishTimestamp(),
      tick: properties[SCHEDULE_PROPERTIES.tick] ?? '',
      messageId: ctx.getEnvelope().meta.id,
      attempt: ctx.getAttempts(),
    });
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: env('SCALE_SERVICE_URL'),
      topic: env('SCALE_TOPIC'),
      consumer: { subscription: 'schedules', subscriptionInitialPosition: 'Earliest' },
      outbox: {
        pool,
        table: env('SCALE_OUTBOX_TABLE'),
        migrate: true,
        schedules: { table: env('SCALE_SCHEDULE_TABLE') },
      },
      logger: silentLogger,
      startupWarnings: false,
    }),
  ],
  controllers: [EverySecondHandler],
})
class InstanceModule {}

runInstance(InstanceModule, () => ({ t: 'ready', instance, at: Date.now() }));
