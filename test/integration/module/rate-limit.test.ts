// maxPerSecond on the broker with the client under test, in a module-built app: a backlog is handled spaced out, never
// more than the limit within a window (counted loosely: a late timer may only delay a start, never add one), and at
// 50/s with a backlog waiting, held to the rate over a window of BQ_PACE_S seconds (docs/retries.md#rate-limit).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { quietLogger, serviceUrl, sleep, uniqueTopic, waitFor } from './support/helpers.js';

const PACE_S = Number(process.env.BQ_PACE_S ?? 10);
jest.setTimeout((PACE_S + 120) * 1000);

const URN = 'urn:babel:paced:call';
const MESSAGES = 40;
const PER_SECOND = 20;

@Injectable()
class Starts {
  readonly at: number[] = [];
  readonly seen = new Set<number>();
}

@Controller()
class Caller {
  constructor(@Inject(Starts) private readonly starts: Starts) {}

  @BabelHandler(URN)
  call(@Payload() data: { n: number }) {
    this.starts.at.push(performance.now());
    this.starts.seen.add(data.n);
  }
}

function app(topic: string, starts: Starts, perSecond = PER_SECOND) {
  @Module({ providers: [{ provide: Starts, useValue: starts }], exports: [Starts] })
  class StartsModule {}
  return rootModule({
    imports: [
      StartsModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { maxPerSecond: perSecond, concurrency: 8 },
        logger: quietLogger,
      }),
    ],
    controllers: [Caller],
  });
}

/** The most starts within any window of `ms` that begins at a start. */
const mostWithin = (starts: number[], ms: number) =>
  Math.max(...starts.map((start) => starts.filter((other) => other >= start && other < start + ms).length));

describe('maxPerSecond (broker)', () => {
  let started: INestMicroservice | undefined;
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });

  it('handles a backlog spaced out at the limit, with 8 handlers free to run at once', async () => {
    const starts = new Starts();
    const service = await startMicroservice(app(uniqueTopic('paced'), starts));
    started = service.app;
    const publisher = service.app.get(BabelPulsarClient);
    await Promise.all(Array.from({ length: MESSAGES }, (_, n) => publisher.publish(URN, { n })));
    await waitFor('every message handled', () => starts.seen.size === MESSAGES, 60_000);

    // 20 a second, evenly: at most 20 in any second and 5 in any quarter of a second (slack for timers), and the
    // 40 messages take about two seconds, not one burst.
    expect(mostWithin(starts.at, 1000)).toBeLessThanOrEqual(PER_SECOND + 2);
    expect(mostWithin(starts.at, 250)).toBeLessThanOrEqual(PER_SECOND / 4 + 2);
    const sorted = [...starts.at].sort((a, b) => a - b);
    expect(sorted.at(-1)! - sorted[0]!).toBeGreaterThan(1500);
  });

  it(`holds 50/s with a backlog waiting, over ${PACE_S} s, evenly`, async () => {
    const perSecond = 50;
    const starts = new Starts();
    const service = await startMicroservice(app(uniqueTopic('paced-50'), starts, perSecond));
    started = service.app;
    const publisher = service.app.get(BabelPulsarClient);
    // More than the window takes: the backlog never runs dry. In chunks (the native producer's queue is bounded).
    const backlog = perSecond * (PACE_S + 4);
    for (let first = 0; first < backlog; first += 200)
      await Promise.all(
        Array.from({ length: Math.min(200, backlog - first) }, (_, i) => publisher.publish(URN, { n: first + i })),
      );
    await waitFor('the first message handled', () => starts.at.length > 0, 30_000);
    const from = starts.at[0]! + 1_000;
    const to = from + PACE_S * 1000;
    await sleep(to - performance.now() + 200);

    const inWindow = starts.at.filter((at) => at >= from && at < to);
    const rate = inWindow.length / PACE_S;
    const busiestSecond = mostWithin(inWindow, 1000);
    const busiestTenth = mostWithin(inWindow, 100);
    console.log(
      `maxPerSecond ${perSecond}: ${rate.toFixed(2)}/s over ${PACE_S} s (busiest second ${busiestSecond}, ` +
        `busiest 100 ms ${busiestTenth})`,
    );
    // The bucket holds one token: a window of W seconds holds at most W × 50 + 1 start times. A timer that fires late
    // delays its start without moving the next ones (their times are reserved 20 ms apart), so at most a start or
    // two due just before a window land in it: slack 1 over the window, 2 in a second and in 100 ms.
    expect(inWindow.length).toBeLessThanOrEqual(perSecond * PACE_S + 2);
    expect(busiestSecond).toBeLessThanOrEqual(perSecond + 3);
    // Smooth: about 5 per 100 ms, never a second's worth at once.
    expect(busiestTenth).toBeLessThanOrEqual(perSecond / 10 + 3);
    // And not slower than the rate (loosely, for a busy machine).
    expect(rate).toBeGreaterThanOrEqual(perSecond * 0.9);
  });
});
