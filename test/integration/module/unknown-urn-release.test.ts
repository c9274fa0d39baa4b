// A rolling deploy on the broker, with the client under test: an old instance that has no handler for a new URN and
// a new instance that has one share a Shared subscription; with unknownUrn 'release' the old one hands every message
// of the new URN back, none is dead-lettered and the new instance handles them all (docs/retries.md#unknown-urns).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelQueueModule, type SettledEvent } from '../../../lib/index.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { quietLogger, serviceUrl, uniqueTopic, waitFor } from './support/helpers.js';

jest.setTimeout(120_000);

const KNOWN = 'urn:babel:rollout:order-placed';
const NEW = 'urn:babel:rollout:order-shipped';
const SHIPPED = 40;
const PLACED = 20;

@Injectable()
class Handled {
  readonly placed: number[] = [];
  readonly shipped: number[] = [];
}

@Controller()
class OldWorker {
  constructor(@Inject(Handled) private readonly handled: Handled) {}

  @BabelHandler(KNOWN)
  placed(@Payload() data: { n: number }) {
    this.handled.placed.push(data.n);
  }
}

@Controller()
class NewWorker {
  constructor(@Inject(Handled) private readonly handled: Handled) {}

  @BabelHandler(KNOWN)
  placed(@Payload() data: { n: number }) {
    this.handled.placed.push(data.n);
  }

  @BabelHandler(NEW)
  shipped(@Payload() data: { n: number }) {
    this.handled.shipped.push(data.n);
  }
}

function instance(topic: string, worker: typeof OldWorker | typeof NewWorker, handled: Handled) {
  @Module({ providers: [{ provide: Handled, useValue: handled }], exports: [Handled] })
  class HandledModule {}
  return rootModule({
    imports: [
      HandledModule,
      BabelQueueModule.forRoot({
        serviceUrl: serviceUrl(),
        topic,
        // A short negative-acknowledgement delay, so that a released message comes back quickly.
        consumer: { unknownUrn: 'release', unknownUrnMaxReleases: 50, nackRedeliverTimeoutMs: 200 },
        logger: quietLogger,
      }),
    ],
    controllers: [worker],
  });
}

describe("unknownUrn 'release' during a rolling deploy (broker)", () => {
  const apps: INestMicroservice[] = [];
  afterEach(async () => {
    await Promise.allSettled(apps.splice(0).map((app) => app.close()));
  });

  it('the old instance releases the new URN, the new one handles every message of it, none is dead-lettered', async () => {
    const topic = uniqueTopic('rollout');
    const onOld = new Handled();
    const onNew = new Handled();
    const old = await startMicroservice(instance(topic, OldWorker, onOld));
    apps.push(old.app);
    const fresh = await startMicroservice(instance(topic, NewWorker, onNew));
    apps.push(fresh.app);

    const publisher = old.app.get(BabelPulsarClient);
    await Promise.all([
      ...Array.from({ length: SHIPPED }, (_, n) => publisher.publish(NEW, { n })),
      ...Array.from({ length: PLACED }, (_, n) => publisher.publish(KNOWN, { n })),
    ]);
    await waitFor(
      'every message handled',
      () => new Set(onNew.shipped).size === SHIPPED && onOld.placed.length + onNew.placed.length >= PLACED,
      90_000,
    );

    const all: SettledEvent[] = [...old.settled, ...fresh.settled];
    expect(all.filter((event) => event.action === 'dead-letter')).toEqual([]);
    expect(new Set(onNew.shipped)).toEqual(new Set(Array.from({ length: SHIPPED }, (_, n) => n)));
    expect(onOld.shipped).toEqual([]);
    // The old instance did get messages of the new URN, and released each instead of failing it.
    const released = old.settled.filter((event) => event.urn === NEW);
    expect(released.length).toBeGreaterThan(0);
    expect(released.every((event) => event.action === 'nack' && event.unknownUrn === 'release')).toBe(true);
    expect(new Set([...onOld.placed, ...onNew.placed]).size).toBe(PLACED);
  });
});
