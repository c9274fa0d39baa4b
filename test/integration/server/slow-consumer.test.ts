// Two instances of one app on one Shared subscription, one of them stuck: the work must spread to the other.
// Each client prefetches up to its receiver queue; a stuck instance holds what it prefetched, and nobody else
// can have it until it lets go. The test measures how much the stuck one holds, per setting, on the client under
// test (a behaviour, not a time: the stuck handler waits for the test to release it).
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, sleep, testClientKind, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:slow:order';
const MESSAGES = 300;
const handledBy = new Map<number, string[]>();
let release: () => void = () => {};
let released = new Promise<void>((resolve) => (release = resolve));

function record(instance: string, n: number): void {
  handledBy.set(n, [...(handledBy.get(n) ?? []), instance]);
}

@Controller()
class Stuck {
  @BabelHandler(URN, { subscription: 'shared' })
  async handle(@Payload() data: { n: number }, @Ctx() _ctx: BabelContext) {
    await released;
    record('stuck', data.n);
  }
}

@Controller()
class Fast {
  @BabelHandler(URN, { subscription: 'shared' })
  handle(@Payload() data: { n: number }) {
    record('fast', data.n);
  }
}

let client: PulsarClientLike;
const services: RunningService[] = [];
beforeAll(() => {
  client = newClient();
});
beforeEach(() => {
  handledBy.clear();
  released = new Promise<void>((resolve) => (release = resolve));
});
afterEach(async () => {
  release();
  await Promise.allSettled(services.splice(0).map((service) => service.close()));
});
afterAll(async () => {
  await client.close();
});

/**
 * One send at a time, so each message is its own entry: Pulsar dispatches a batch whole to one consumer, so a
 * batched publish would measure the producer's batch size, not the consumer's prefetch (see the docs).
 */
async function publishAll(topic: string): Promise<void> {
  const producer = await client.createProducer({ topic });
  try {
    for (let n = 0; n < MESSAGES; n++) {
      const envelope = EnvelopeCodec.make(URN, { n }, { queue: topic });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
    }
  } finally {
    await producer.close();
  }
}

/** Starts the stuck instance first (it gets its prefetch), then the fast one; returns what the stuck one held. */
async function heldByStuck(receiverQueueSize: number | undefined): Promise<number> {
  const topic = uniqueTopic('slow');
  const settings = {
    topics: topic,
    subscriptionType: 'Shared' as const,
    subscriptionInitialPosition: 'Earliest' as const,
    ...(receiverQueueSize !== undefined && { receiverQueueSize }),
  };
  services.push(await startService([Stuck], { client: newClient(), ...settings }));
  services.push(await startService([Fast], { client: newClient(), ...settings }));
  await publishAll(topic);
  // The fast instance handles everything the stuck one does not hold; then nothing moves until the release.
  let last = -1;
  await waitFor(
    'the fast instance to stop getting more',
    async () => {
      const now = handledBy.size;
      const stable = now === last && now > 0;
      last = now;
      if (!stable) await sleep(500);
      return stable;
    },
    60_000,
  );
  const held = MESSAGES - handledBy.size;
  release();
  await waitFor('every message handled', () => handledBy.size === MESSAGES, 60_000);
  await sleep(300);
  // Nothing lost, nothing twice, whatever the setting.
  expect([...handledBy.values()].filter((instances) => instances.length !== 1)).toEqual([]);
  console.log(
    `[slow consumer] ${testClientKind()}, receiverQueueSize ${receiverQueueSize ?? 'default'}: the stuck instance ` +
      `held ${held} of ${MESSAGES} messages`,
  );
  return held;
}

describe('two instances on one Shared subscription, one stuck', () => {
  it('with the default receiver queue (10 at concurrency 1), the stuck instance holds at most the bound', async () => {
    expect(await heldByStuck(undefined)).toBeLessThanOrEqual(mostHeld(10));
  });

  it('with receiverQueueSize 1, it holds at most its handler and two more', async () => {
    expect(await heldByStuck(1)).toBeLessThanOrEqual(mostHeld(1));
  });
});

/**
 * What docs/pulsar-features.md states a stuck instance (concurrency 1) may hold: its handler's message and its
 * receiver queue, twice over through the WebSocket API (the proxy's queue, and what it already sent).
 */
const mostHeld = (receiverQueueSize: number) => 1 + 2 * receiverQueueSize;
