// A dependency that fails for a while, on the broker with the client under test, in a module-built app: the
// subscription's circuit breaker trips, holds the messages (none dead-lettered after it tripped), probes, and once the
// dependency is back every message is handled (docs/retries.md#circuit-breaker).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { serviceUrl, uniqueTopic, waitFor } from './support/helpers.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:breaker:charge';
const MESSAGES = 30;
const BREAKER = { failureRatio: 0.5, windowMs: 60_000, minimumMessages: 5, openMs: 500, probes: 2 };

@Injectable()
class Dependency {
  down = true;
  calls = 0;
  readonly handled = new Set<number>();
}

@Controller()
class Charges {
  constructor(@Inject(Dependency) private readonly dependency: Dependency) {}

  @BabelHandler(URN)
  charge(@Payload() data: { n: number }) {
    this.dependency.calls++;
    if (this.dependency.down) throw new Error('the payment service is down');
    this.dependency.handled.add(data.n);
  }
}

/** The same handler giving its subscription the breaker itself (`@BabelHandler(urn, { circuitBreaker })`). */
@Controller()
class ChargesWithBreaker {
  constructor(@Inject(Dependency) private readonly dependency: Dependency) {}

  @BabelHandler(URN, { circuitBreaker: BREAKER })
  charge(@Payload() data: { n: number }) {
    this.dependency.calls++;
    if (this.dependency.down) throw new Error('the payment service is down');
    this.dependency.handled.add(data.n);
  }
}

function app(topic: string, dependency: Dependency, lines: string[], given: 'server' | 'handler') {
  @Module({ providers: [{ provide: Dependency, useValue: dependency }], exports: [Dependency] })
  class DependencyModule {}
  const record = (line: string) => lines.push(line);
  return rootModule({
    imports: [
      DependencyModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        consumer: { maxAttempts: 3, ...(given === 'server' && { circuitBreaker: BREAKER }) },
        logger: { log: record, warn: record, error: () => {}, debug: () => {} },
      }),
    ],
    controllers: [given === 'server' ? Charges : ChargesWithBreaker],
  });
}

describe.each(['server', 'handler'] as const)('circuit breaker given by the %s (broker)', (given) => {
  let started: INestMicroservice | undefined;
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });

  it('trips on a failing dependency, dead-letters nothing after, handles everything after recovery', async () => {
    const topic = uniqueTopic('breaker');
    const dependency = new Dependency();
    const lines: string[] = [];
    const service = await startMicroservice(app(topic, dependency, lines, given));
    started = service.app;
    const breakerLines = () => lines.filter((line) => line.startsWith('circuit breaker of'));

    const publisher = service.app.get(BabelPulsarClient);
    await Promise.all(Array.from({ length: MESSAGES }, (_, n) => publisher.publish(URN, { n })));
    await waitFor('the breaker trips', () => service.server.describe().some((state) => state.tripped), 60_000);
    const deadLetteredBeforeTrip = service.settled.filter((event) => event.action === 'dead-letter').length;
    // The outage goes on through two probes that fail (each opens the breaker again).
    await waitFor(
      'two failed probes',
      () => breakerLines().filter((line) => line.includes('half-open -> open')).length >= 2,
      60_000,
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}\n${lines.join('\n')}\n${JSON.stringify(service.server.describe())}\nsettled ${JSON.stringify(service.settled.map((e) => e.action))}`,
      );
    });
    const callsWhileDown = dependency.calls;
    dependency.down = false;
    await waitFor('every message handled', () => dependency.handled.size === MESSAGES, 60_000).catch((error: Error) => {
      const missing = Array.from({ length: MESSAGES }, (_, n) => n).filter((n) => !dependency.handled.has(n));
      throw new Error(
        `${error.message}: missing ${JSON.stringify(missing)}\n${lines.join('\n')}\n` +
          `${JSON.stringify(service.server.describe())}\nsettled ${JSON.stringify(service.settled.map((e) => e.action))}`,
      );
    });
    await waitFor('the breaker closes', () => service.server.describe().every((state) => !state.tripped), 30_000);

    expect(deadLetteredBeforeTrip).toBe(0);
    expect(service.settled.filter((event) => event.action === 'dead-letter')).toEqual([]);
    // Held, not burnt: while down, the handler ran for the messages before the trip and one per probe, never 3 x 30.
    expect(callsWhileDown).toBeLessThan(MESSAGES);
    const changes = breakerLines().map((line) => /\) (\S+ -> \S+): /.exec(line)?.[1]);
    expect(changes.slice(0, 4)).toEqual([
      'closed -> open',
      'open -> half-open',
      'half-open -> open',
      'open -> half-open',
    ]);
    expect(changes.at(-1)).toBe('half-open -> closed');
    // One line per change: every change follows from the state the previous one ended in.
    for (let i = 1; i < changes.length; i++)
      expect(changes[i]!.split(' -> ')[0]).toBe(changes[i - 1]!.split(' -> ')[1]);
  });
});
