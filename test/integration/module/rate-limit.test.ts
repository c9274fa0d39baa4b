// maxPerSecond on the broker with the client under test, in a module-built app: a backlog is handled spaced out, never
// more than the limit within a window (counted loosely: a late timer may only delay a start, never add one).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { quietLogger, serviceUrl, uniqueTopic, waitFor } from './support/helpers.js';

jest.setTimeout(120_000);

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

function app(topic: string, starts: Starts) {
  @Module({ providers: [{ provide: Starts, useValue: starts }], exports: [Starts] })
  class StartsModule {}
  return rootModule({
    imports: [
      StartsModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { maxPerSecond: PER_SECOND, concurrency: 8 },
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
});
