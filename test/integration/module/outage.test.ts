// A dependency outage under steady traffic, on the broker with the client under test: one module-built app with the
// circuit breaker and one without it, each on a topic of its own (a retry copy re-published to a shared topic would
// reach the other's subscription too), both fed the same 200 messages a second before, during and after an outage of BQ_OUTAGE_S seconds (docs/operations.md#a-dependency-outage-under-load).
// Asserts behaviour, not wall-clock: with the breaker nothing is dead-lettered once it tripped and everything is
// handled after recovery; without it the outage's messages are dead-lettered; neither loses a message.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { serviceUrl, sleep, uniqueTopic, waitFor } from './support/helpers.js';

const OUTAGE_S = Number(process.env.BQ_OUTAGE_S ?? 12);
const RATE = 200;
const BEFORE_S = 2;
const AFTER_S = 2;
const MAX_ATTEMPTS = 3;
const BREAKER = { failureRatio: 0.5, windowMs: 5_000, minimumMessages: 20, openMs: 2_000, probes: 3 };
const URN = 'urn:babel:outage:charge';

jest.setTimeout((OUTAGE_S * 4 + 150) * 1000);

/** The dependency both apps call: down during the outage. */
const dependency = { down: false };

/**
 * What one app saw: messages handled, messages that failed their last attempt before and after the breaker tripped
 * (a message held by the breaker fails it and is handled later), and its dead letters.
 */
@Injectable()
class Ledger {
  readonly handled = new Set<number>();
  readonly failedLast = new Set<number>();
  readonly failedLastAfterTrip = new Set<number>();
  tripped = false;
  deadLetters = 0;

  /** Dead-lettered after the trip: the last attempt failed after it and the message was never handled. */
  get deadLetteredAfterTrip(): number {
    return [...this.failedLastAfterTrip].filter((n) => !this.handled.has(n)).length;
  }
}

function app(topic: string, ledger: Ledger, breaker: boolean) {
  @Controller()
  class Charges {
    constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

    @BabelHandler(URN)
    charge(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
      if (dependency.down) {
        if (ctx.getAttempts() + 1 >= MAX_ATTEMPTS)
          (this.ledger.tripped ? this.ledger.failedLastAfterTrip : this.ledger.failedLast).add(data.n);
        throw new Error('the payment service is down');
      }
      this.ledger.handled.add(data.n);
    }
  }

  @Module({ providers: [{ provide: Ledger, useValue: ledger }], exports: [Ledger] })
  class LedgerModule {}
  const warn = (line: string) => {
    if (line.includes('closed -> open')) ledger.tripped = true;
  };
  return rootModule({
    imports: [
      LedgerModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: {
          maxAttempts: MAX_ATTEMPTS,
          concurrency: 4,
          // A last attempt released while the breaker is open comes back after this, not the client's 60 s.
          ...(breaker && { circuitBreaker: BREAKER, nackRedeliverTimeoutMs: 1_000 }),
        },
        logger: { log: warn, warn, error: () => {}, debug: () => {} },
      }),
    ],
    controllers: [Charges],
  });
}

/** Publishes `RATE` a second for `seconds`, catching up by the clock so that a late timer does not lower the rate. */
async function publishAtRate(publishers: BabelPulsarClient[], first: number, seconds: number): Promise<number> {
  const start = performance.now();
  const total = RATE * seconds;
  const sends: Array<Promise<string>> = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * RATE) / 1000) + 1);
    for (; sent < due; sent++)
      for (const publisher of publishers) sends.push(publisher.publish(URN, { n: first + sent }));
    await sleep(20);
  }
  await Promise.all(sends);
  return total;
}

/** Messages neither handled nor failed at their last attempt (a held message fails it and is handled later). */
const unsettled = (ledger: Ledger, published: number) =>
  Array.from({ length: published }, (_, n) => n).filter(
    (n) => !ledger.handled.has(n) && !ledger.failedLast.has(n) && !ledger.failedLastAfterTrip.has(n),
  );
const deadLettered = (ledger: Ledger) => ledger.deadLetters;
/** Neither handled nor dead-lettered. */
const lost = (ledger: Ledger, published: number) => published - ledger.handled.size - deadLettered(ledger);

describe(`a ${OUTAGE_S} s dependency outage at ${RATE} messages a second (broker)`, () => {
  const started: INestMicroservice[] = [];
  afterEach(async () => {
    dependency.down = false;
    await Promise.all(started.splice(0).map((app) => app.close()));
  });

  it('with the breaker: none dead-lettered after it trips, all handled after; without: the outage dead-lettered', async () => {
    const guarded = new Ledger();
    const unguarded = new Ledger();
    const withBreaker = await startMicroservice(app(uniqueTopic('outage-breaker'), guarded, true));
    started.push(withBreaker.app);
    const without = await startMicroservice(app(uniqueTopic('outage-plain'), unguarded, false));
    started.push(without.app);
    for (const [service, ledger] of [
      [withBreaker, guarded],
      [without, unguarded],
    ] as const)
      service.server.on('settled', (event) => {
        if (event.action === 'dead-letter') ledger.deadLetters++;
      });

    const publisher = [withBreaker.app.get(BabelPulsarClient), without.app.get(BabelPulsarClient)];
    let published = await publishAtRate(publisher, 0, BEFORE_S);
    dependency.down = true;
    published += await publishAtRate(publisher, published, OUTAGE_S);
    dependency.down = false;
    published += await publishAtRate(publisher, published, AFTER_S);

    const drainMs = (OUTAGE_S * 3 + 90) * 1000;
    for (const [name, ledger] of [
      ['guarded', guarded],
      ['unguarded', unguarded],
    ] as const)
      await waitFor(`the ${name} app settles every message`, () => lost(ledger, published) === 0, drainMs).catch(
        (error: Error) => {
          throw new Error(`${error.message}: ${lost(ledger, published)} missing`);
        },
      );
    await waitFor('the breaker closes', () => withBreaker.server.describe().every((state) => !state.tripped), 30_000);

    const after = guarded.deadLetteredAfterTrip;
    const before = guarded.deadLetters - after;
    console.log(
      `outage ${OUTAGE_S} s at ${RATE}/s, ${published} published: with the breaker ${before} dead-lettered before ` +
        `it tripped, ${after} after, ${lost(guarded, published)} lost; without it ${deadLettered(unguarded)} ` +
        `dead-lettered, ${lost(unguarded, published)} lost`,
    );
    expect(guarded.tripped).toBe(true);
    expect(after).toBe(0);
    // Every message handled or dead-lettered, each once, and every one of them reached a handler.
    expect(lost(guarded, published)).toBe(0);
    expect(unsettled(guarded, published)).toEqual([]);
    expect(lost(unguarded, published)).toBe(0);
    expect(unsettled(unguarded, published)).toEqual([]);
    // Without the breaker the outage's messages used up their attempts: more than the breaker let through.
    expect(deadLettered(unguarded)).toBeGreaterThan(before);
  });
});
