// One app instance of the scale-out runs (test/integration/scale, npm run demo -- --instances N), started as a
// child process by scripts/lib/scale-run.mjs through scripts/lib/ts/register.mjs. A Nest microservice built the way
// users build it (BabelQueueModule.forRoot({ serviceUrl }), the module's server as the strategy) with one
// @BabelHandler; every delivery it handles or fails is reported as one JSON line on stdout, written before the
// handler returns, so everything acknowledged has been reported even when the process is killed.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { performance } from 'node:perf_hooks';
import { BabelContext, BabelHandler, BabelQueueModule } from '../../../lib/index.js';
import type { SubscriptionType } from '../../../lib/index.js';
import { env, runInstance, silentLogger } from './run-instance.js';
import { SCALE_URN, type ScaleRecord, type ScaleTick } from './records.js';

const instance = env('SCALE_INSTANCE');
const handlerMs = Number(env('SCALE_HANDLER_MS', '0'));
/** A message whose seq is a multiple of this fails its first delivery (0: none fails). */
const failEvery = Number(env('SCALE_FAIL_EVERY', '0'));

/** Wall-clock microseconds, comparable between processes on one machine (Date.now() has only ms). */
const nowMicros = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000);
const report = (record: ScaleRecord): void => {
  process.stdout.write(`${JSON.stringify(record)}\n`);
};

@Controller()
class TickHandler {
  @BabelHandler(SCALE_URN)
  async tick(@Payload() tick: ScaleTick, @Ctx() ctx: BabelContext): Promise<void> {
    const base = {
      instance,
      key: tick.key,
      seq: tick.seq,
      attempt: ctx.getAttempts(),
      partition: ctx.getPartition(),
      partitionKey: ctx.getPartitionKey(),
      topic: ctx.getTopic(),
      queue: ctx.getEnvelope().meta.queue,
    };
    if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
    if (failEvery > 0 && tick.seq % failEvery === 0 && ctx.getAttempts() === 0) {
      report({ t: 'failed', at: nowMicros(), ...base });
      throw new Error(`seq ${tick.seq} of ${tick.key} fails its first delivery`);
    }
    report({ t: 'handled', at: nowMicros(), ...base });
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: env('SCALE_SERVICE_URL'),
      topic: env('SCALE_TOPIC'),
      consumer: {
        subscription: env('SCALE_SUBSCRIPTION', 'scale'),
        subscriptionType: env('SCALE_SUBSCRIPTION_TYPE', 'Shared') as SubscriptionType,
        concurrency: Number(env('SCALE_CONCURRENCY', '2')),
        receiverQueueSize: Number(env('SCALE_RECEIVER_QUEUE', '20')),
        maxAttempts: 3,
        ...(env('SCALE_RETRY', 'republish') === 'nack' && { retry: 'nack' as const, nackRedeliverTimeoutMs: 200 }),
      },
      logger: silentLogger,
      startupWarnings: false,
    }),
  ],
  controllers: [TickHandler],
})
class InstanceModule {}

runInstance(InstanceModule, () => ({ t: 'ready', instance, at: nowMicros() }));
