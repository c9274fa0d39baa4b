// How a server takes messages from the broker, on the client under test: in publish order at concurrency 1, with
// the default receiver queue and with a zero one (where the native client cannot receive asynchronously and keeps
// its listener), with a stop in the middle of a flow (the native client taking its backlog in batches of 5 and of
// 32), and from a partitioned topic: every message handled once, in order per key, nothing left on the backlog.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { backlog, newClient, sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(90_000);

const URN = 'urn:babel:intake:tick';
const handled: number[] = [];
let slowEvery = 0;

@Controller()
class Ticks {
  @BabelHandler(URN)
  async handle(@Payload() data: { n: number }) {
    handled.push(data.n);
    if (slowEvery > 0 && data.n % slowEvery === 0) await sleep(5);
  }
}

let client: PulsarClientLike;
const services: RunningService[] = [];
beforeAll(() => {
  client = newClient();
});
beforeEach(() => {
  handled.length = 0;
  slowEvery = 0;
});
afterEach(async () => {
  await Promise.allSettled(services.splice(0).map((service) => service.close()));
});
afterAll(async () => {
  await client.close();
});

/**
 * One send at a time, so each message is its own entry: Pulsar acknowledges a batch entry only as a whole (unless
 * the broker tracks batch indexes), so a stop inside a batch would bring its handled messages back with it.
 */
async function publish(topic: string, from: number, count: number, keyOf?: (n: number) => string): Promise<void> {
  const producer = await client.createProducer({ topic });
  try {
    for (let n = from; n < from + count; n++) {
      const envelope = EnvelopeCodec.make(URN, { n }, { queue: topic });
      await producer.send({
        data: EnvelopeCodec.encodeToBuffer(envelope),
        properties: pulsarProperties(envelope),
        ...(keyOf && { partitionKey: keyOf(n) }),
      });
    }
  } finally {
    await producer.close();
  }
}

const serviceOn = async (topic: string, receiverQueueSize?: number) => {
  const service = await startService([Ticks], {
    client: newClient(),
    topics: topic,
    concurrency: 1,
    subscriptionType: 'Failover',
    subscriptionInitialPosition: 'Earliest',
    ...(receiverQueueSize !== undefined && { receiverQueueSize }),
  });
  services.push(service);
  return service;
};

const range = (count: number) => Array.from({ length: count }, (_, n) => n);

describe.each([
  ['the default receiver queue', undefined],
  ['a receiver queue of 0', 0],
])('intake with %s', (_name, receiverQueueSize) => {
  it('hands every message to the handler once, in publish order, and acknowledges it', async () => {
    const topic = uniqueTopic('intake');
    await serviceOn(topic, receiverQueueSize);
    await publish(topic, 0, 200);
    await waitFor('200 messages handled', () => handled.length >= 200, 60_000);
    await sleep(300);
    expect(handled).toEqual(range(200));
    await waitFor('an empty backlog', async () => (await backlog(topic)) === 0, 20_000);
  });
});

/**
 * Starts an instance on a topic holding 400 messages, stops it mid-flow, starts the next: Failover at concurrency 1
 * keeps the order, and what was acknowledged is never handled again.
 */
async function stopMidFlowThenResume(topic: string, receiverQueueSize?: number): Promise<void> {
  slowEvery = 2;
  const first = await serviceOn(topic, receiverQueueSize);
  await waitFor('the first instance under way', () => handled.length >= 50, 60_000);
  await first.close();
  expect(handled.length).toBeLessThan(400);
  await serviceOn(topic, receiverQueueSize);
  await waitFor('all 400 handled', () => new Set(handled).size === 400, 60_000);
  await sleep(300);
  expect(handled).toEqual(range(400));
  await waitFor('an empty backlog', async () => (await backlog(topic)) === 0, 20_000);
}

it.each([
  ['the default receiver queue (10)', undefined],
  ['a receiver queue of 1000', 1000],
])(
  'a stop in the middle of a flow, with %s, leaves the rest for the next instance: each handled once',
  async (_name, receiverQueueSize) => {
    const topic = uniqueTopic('intake-stop');
    await publish(topic, 0, 400);
    await stopMidFlowThenResume(topic, receiverQueueSize);
  },
);

it('a backlog on a partitioned topic: every message handled once, in publish order per key', async () => {
  const topic = uniqueTopic('intake-partitioned');
  const created = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/partitions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: '3',
  });
  expect(created.ok).toBe(true);
  const keyOf = (n: number) => `key-${n % 5}`;
  await publish(topic, 0, 300, keyOf);
  await serviceOn(topic, 1000);
  await waitFor('300 messages handled', () => handled.length >= 300, 60_000);
  await sleep(300);
  expect([...handled].sort((a, b) => a - b)).toEqual(range(300));
  for (let key = 0; key < 5; key++) {
    const ofKey = handled.filter((n) => keyOf(n) === `key-${key}`);
    expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
  }
});

it('a burst published at once through BabelPulsarClient, then a stop mid-flow: no handled message comes back', async () => {
  // The library's producers send each message as its own entry (docs/pulsar-features.md#slow-consumers-on-a-shared-subscription):
  // a batch entry partly acknowledged at the stop would come back whole, handled messages included.
  const topic = uniqueTopic('intake-burst');
  const publishing = newClient();
  const publisher = new BabelPulsarClient({ client: publishing, topic });
  try {
    await Promise.all(range(400).map((n) => publisher.publish(URN, { n })));
  } finally {
    await publisher.close();
    await publishing.close();
  }
  await stopMidFlowThenResume(topic);
});
