// One app instance of the exactly-once chaos proof (test/chaos/exactly-once.test.ts), a child process started
// through scripts/lib/ts/register.mjs. Built as users build it (BabelQueueModule.forRoot({ serviceUrl })): every
// handler is an inbox handler that inserts a business row and ctx.publish()es one follow-up in the inbox's
// transaction; the module's relay sends the follow-ups, through producers the broker deduplicates.
// Env: EO_SERVICE_URL, EO_TOPIC, EO_FOLLOW_TOPIC, EO_TABLES (suffix of inbox_/outbox_/orders_), EO_INSTANCE (the
// relay's producer name is derived from it), EO_HANDLER_MS, EO_FAIL_EVERY (n % it === 0 fails its first delivery),
// BQ_PG_URL. Prints {"t":"ready"} once listening.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import pg from 'pg';
import { BabelContext, BabelHandler, BabelOutbox, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import { PostgresInbox } from '../../../lib/inbox/index.js';

const EO_URN = 'urn:babel:orders:placed';
const EO_FOLLOW_UP = 'urn:babel:invoices:requested';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

const tables = env('EO_TABLES');
const handlerMs = Number(env('EO_HANDLER_MS', '0'));
const failEvery = Number(env('EO_FAIL_EVERY', '0'));
const instance = env('EO_INSTANCE');
const pool = new pg.Pool({ connectionString: env('BQ_PG_URL'), max: 12, application_name: `eo-${instance}` });
pool.on('error', () => undefined); // a connection cut by the kill of another process's transaction: the next query says so

@Controller()
class Orders {
  @BabelHandler(EO_URN)
  async placed(@Payload('n') n: number, @Ctx() ctx: BabelContext): Promise<void> {
    const tx = ctx.getTransaction<pg.PoolClient>();
    await tx.query(`INSERT INTO orders_${tables} (message_id, n, instance) VALUES ($1, $2, $3)`, [
      ctx.getEnvelope().meta.id,
      n,
      instance,
    ]);
    await ctx.publish(EO_FOLLOW_UP, { n, order: ctx.getEnvelope().meta.id });
    if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
    if (failEvery > 0 && n % failEvery === 0 && ctx.getAttempts() === 0) throw new Error(`order ${n} fails once`);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: env('EO_SERVICE_URL'),
      topic: env('EO_TOPIC'),
      consumer: {
        subscription: 'exactly-once',
        subscriptionType: 'Shared',
        subscriptionInitialPosition: 'Earliest',
        concurrency: 8,
        maxAttempts: 3,
      },
      inbox: {
        store: new PostgresInbox({
          pool,
          table: `inbox_${tables}`,
          outbox: new BabelOutbox({ table: `outbox_${tables}`, topic: env('EO_FOLLOW_TOPIC') }),
        }),
        every: true,
      },
      outbox: {
        pool,
        table: `outbox_${tables}`,
        relay: { pollIntervalMs: 50 },
        deduplication: { producerName: `eo-relay-${tables}-${instance}` },
      },
    }),
  ],
  controllers: [Orders],
})
class InstanceModule {}

const app = await NestFactory.createMicroservice(InstanceModule, {
  inject: [BabelPulsarServer],
  useFactory: (server: BabelPulsarServer) => ({ strategy: server }),
  logger: ['error'],
  abortOnError: false,
});
await app.listen();
process.stdout.write(`${JSON.stringify({ t: 'ready', instance })}\n`);
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.end())
    .finally(() => process.exit(0));
});
