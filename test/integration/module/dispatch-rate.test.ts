// dispatchRate on the broker with the client under test: three module-built instances on one Shared subscription
// set the broker's dispatch-rate policy of 100 a second, and a backlog is handled at that rate in all, not 100 a
// second each. Counted loosely in the safe direction: a slow machine can only handle fewer, never more.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { quietLogger, serviceUrl, sleep, uniqueTopic, waitFor, webUrl } from './support/helpers.js';

jest.setTimeout(180_000);

const URN = 'urn:babel:dispatch-rate:call';
const PER_SECOND = 100;
const INSTANCES = 3;
/** Seconds measured once handling has begun (after a short settling time), and the backlog that outlasts them. */
const WINDOW_S = 20;
const SETTLE_MS = 2_000;
const BACKLOG = PER_SECOND * (WINDOW_S + 6);

/** Handler start times of all instances (ms, performance.now()), and which instance handled how many. */
@Injectable()
class Handled {
  readonly at: number[] = [];
  readonly perInstance = new Map<number, number>();
}

function instance(topic: string, handled: Handled, index: number) {
  @Controller()
  class Caller {
    constructor(@Inject(Handled) private readonly handled: Handled) {}

    @BabelHandler(URN)
    call(@Payload() _data: { n: number }) {
      this.handled.at.push(performance.now());
      this.handled.perInstance.set(index, (this.handled.perInstance.get(index) ?? 0) + 1);
    }
  }

  @Module({ providers: [{ provide: Handled, useValue: handled }], exports: [Handled] })
  class HandledModule {}
  return rootModule({
    imports: [
      HandledModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { dispatchRate: { perSecond: PER_SECOND }, concurrency: 8 },
        logger: quietLogger,
      }),
    ],
    controllers: [Caller],
  });
}

/** The subscription's dispatch-rate policy as the admin API reports it (null when none). */
async function policyOf(topic: string): Promise<number | null> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/babelqueue/dispatchRate`);
  if (!response.ok) return null;
  const body = (await response.json().catch(() => null)) as { dispatchThrottlingRateInMsg?: number } | null;
  return body?.dispatchThrottlingRateInMsg ?? null;
}

/** The most starts within any window of `ms` that begins at a start. */
const mostWithin = (starts: number[], ms: number) =>
  Math.max(...starts.map((start) => starts.filter((other) => other >= start && other < start + ms).length));

describe('dispatchRate across instances (broker)', () => {
  const started: INestMicroservice[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((app) => app.close()));
  });

  it(`holds ${INSTANCES} instances of one Shared subscription to ${PER_SECOND}/s in all`, async () => {
    const topic = uniqueTopic('dispatch-rate');
    const handled = new Handled();
    for (let index = 0; index < INSTANCES; index++)
      started.push((await startMicroservice(instance(topic, handled, index))).app);
    // The policy is set before each start resolved; the broker applies it once its policies topic carried it.
    expect(await policyOf(topic)).toBe(PER_SECOND);
    await sleep(3_000);

    const publisher = started[0]!.get(BabelPulsarClient);
    // In chunks: the native producer's queue holds a bounded number of messages in flight.
    const publishing = (async () => {
      for (let first = 0; first < BACKLOG; first += 200)
        await Promise.all(
          Array.from({ length: Math.min(200, BACKLOG - first) }, (_, i) => publisher.publish(URN, { n: first + i })),
        );
    })();
    await waitFor('the first message handled', () => handled.at.length > 0, 30_000);
    const from = handled.at[0]! + SETTLE_MS;
    const to = from + WINDOW_S * 1000;
    await sleep(to - performance.now() + 500);
    await publishing;

    const inWindow = handled.at.filter((at) => at >= from && at < to);
    const rate = inWindow.length / WINDOW_S;
    const busiestSecond = mostWithin(inWindow, 1000);
    console.log(
      `dispatchRate ${PER_SECOND}/s over ${INSTANCES} instances: ${rate.toFixed(1)}/s in all over ${WINDOW_S} s ` +
        `(busiest second ${busiestSecond}; per instance ${[...handled.perInstance.values()].join(', ')})`,
    );
    // At most the limit, whichever instance ran: over the window, the limit plus what the bucket held at its start
    // and what the consumers had prefetched (10 %); in any one second, at most two seconds' worth (a full bucket and
    // its refill), never the 3 × 100 of a limit per instance.
    expect(rate).toBeLessThanOrEqual(PER_SECOND * 1.1);
    expect(busiestSecond).toBeLessThanOrEqual(PER_SECOND * 2);
    // And the backlog did flow, through every instance.
    expect(rate).toBeGreaterThan(PER_SECOND / 4);
    expect(handled.perInstance.size).toBe(INSTANCES);
  });
});
