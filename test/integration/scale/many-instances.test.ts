// Many instances on one subscription of a partitioned topic, on the client under test: three app processes
// (test/support/scale/instance.ts) share the load, one of them is killed mid-stream and nothing is lost, and on
// Key_Shared the per-key order of first deliveries holds across instances while a retry copy goes back to the
// instance that owns its key. Counts are printed and asserted; time never is.
import { jest } from '@jest/globals';
import { BabelPulsarClient, type PulsarClientLike } from '../../../lib/index.js';
import {
  analyse,
  createPartitionedTopic,
  deletePartitionedTopic,
  describeRun,
  startInstances,
  ticks,
  type ScaleInstance,
} from '../../../scripts/lib/scale-run.mjs';
import { newClient, serviceUrl, testClientKind, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { SCALE_URN, type ScaleTick } from '../../support/scale/records.js';

jest.setTimeout(150_000);

const INSTANCES = 3;
const PARTITIONS = 4;
const KEYS = 12;
const PER_KEY = 40;

let client: PulsarClientLike;
let instances: ScaleInstance[] = [];
const topics: string[] = [];

beforeAll(() => {
  client = newClient();
});
afterEach(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  instances = [];
});
afterAll(async () => {
  await client.close();
  await Promise.all(topics.map((topic) => deletePartitionedTopic(webUrl(), topic)));
});

/** A fresh 4-partition topic. */
async function partitionedTopic(prefix: string): Promise<string> {
  const topic = uniqueTopic(prefix);
  topics.push(topic);
  await createPartitionedTopic(webUrl(), topic, PARTITIONS);
  return topic;
}

/** Publishes in order, a chunk at a time: each key's ticks go to one partition, in seq order. */
async function publishAll(topic: string, published: ScaleTick[]): Promise<void> {
  const publisher = new BabelPulsarClient({ client, topic });
  try {
    for (let i = 0; i < published.length; i += 40) {
      await Promise.all(published.slice(i, i + 40).map((t) => publisher.publish(SCALE_URN, t, { key: t.key })));
    }
  } finally {
    await publisher.close();
  }
}

const instanceSettings = (topic: string, env: Record<string, string>): Record<string, string> => ({
  SCALE_SERVICE_URL: serviceUrl(),
  SCALE_TOPIC: topic,
  SCALE_SUBSCRIPTION: 'scale',
  SCALE_HANDLER_MS: '5',
  SCALE_CONCURRENCY: '2',
  SCALE_RECEIVER_QUEUE: '20',
  ...env,
});

const handledSoFar = () =>
  instances.reduce((sum, instance) => sum + instance.deliveries().filter((d) => d.t === 'handled').length, 0);

/**
 * Starts the instances (all subscribed before the first publish), publishes while they consume, kills the second
 * once a third of the ticks were handled, and waits until none is lost.
 */
async function runWithACrash(published: ScaleTick[], env: Record<string, string>, prefix: string) {
  const topic = await partitionedTopic(prefix);
  instances = await startInstances(INSTANCES, instanceSettings(topic, env));
  const publishing = publishAll(topic, published);
  await waitFor('a third of the ticks handled', () => handledSoFar() >= published.length / 3, 60_000);
  const victim = instances[1]!;
  const handledBeforeKill = handledSoFar();
  await victim.kill();
  await publishing;
  await waitFor('every tick handled', () => analyse(instances, published).lost === 0, 60_000).catch(() => undefined);
  // Let redeliveries that are still on their way arrive, so duplicates are counted too.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const label = `${victim.name} killed after ${handledBeforeKill} of ${published.length} ticks were handled`;
  return { topic, victim, label, summary: analyse(instances, published) };
}

describe(`many instances (${testClientKind()})`, () => {
  it('splits a Shared subscription across 3 instances and loses nothing when one is killed mid-stream', async () => {
    const published = ticks(KEYS, PER_KEY);
    const run = await runWithACrash(published, { SCALE_SUBSCRIPTION_TYPE: 'Shared' }, 'scale-shared');
    const { topic, victim, summary } = run;
    // Shared makes no per-key order promise: the order violations printed here are expected.
    console.log(describeRun(`${testClientKind()}, Shared, ${run.label}`, summary));

    expect(summary.lost).toBe(0);
    for (const instance of instances) expect(summary.handledPerInstance[instance.name]).toBeGreaterThan(0);
    // The survivors carried the rest: each at least a tenth of the whole.
    for (const instance of instances.filter((i) => i !== victim)) {
      expect(summary.handledPerInstance[instance.name]).toBeGreaterThanOrEqual(published.length / 10);
    }
    expect(summary.topics).toEqual([topic]);
    expect(summary.queues).toEqual([topic]);
  });

  it('keeps per-key order of first deliveries across instances on Key_Shared, through a crash and retries', async () => {
    const published = ticks(KEYS, PER_KEY);
    const run = await runWithACrash(
      published,
      // seq 10, 20, 30 and 40 of every key fail their first delivery
      { SCALE_SUBSCRIPTION_TYPE: 'KeyShared', SCALE_FAIL_EVERY: '10' },
      'scale-keyshared',
    );
    const { summary } = run;
    console.log(describeRun(`${testClientKind()}, Key_Shared, ${run.label}`, summary));

    expect(summary.lost).toBe(0);
    expect(summary.orderViolations).toBe(0);
    // Key_Shared hands each instance the keys of its hash range: with 12 keys one instance may own none, so the
    // split is checked on Shared (above); here at least two instances must have worked.
    const working = Object.values(summary.handledPerInstance).filter((handled) => handled > 0);
    expect(working.length).toBeGreaterThanOrEqual(2);
  });

  it('sends a retry copy back to the instance that owns its key on Key_Shared (stable membership)', async () => {
    // Every instance is subscribed before the first publish, so no key changes owner during the run.
    const topic = await partitionedTopic('scale-owner');
    instances = await startInstances(
      INSTANCES,
      instanceSettings(topic, { SCALE_SUBSCRIPTION_TYPE: 'KeyShared', SCALE_FAIL_EVERY: '5' }),
    );
    const published = ticks(KEYS, 15);
    await publishAll(topic, published);
    await waitFor('every tick handled', () => analyse(instances, published).lost === 0, 60_000);
    const summary = analyse(instances, published);
    console.log(describeRun(`${testClientKind()}, Key_Shared, all instances joined before publishing`, summary));

    expect(summary.lost).toBe(0);
    expect(summary.orderViolations).toBe(0);
    expect(summary.retried).toBe(KEYS * 3); // seq 5, 10 and 15 of every key
    expect(summary.retriesOnSameInstance).toBe(summary.retried);
    const deliveries = instances.flatMap((i) => i.deliveries());
    for (const failure of deliveries.filter((d) => d.t === 'failed')) {
      const retry = deliveries.find(
        (d) => d.t === 'handled' && d.key === failure.key && d.seq === failure.seq && d.attempt > 0,
      );
      expect(retry?.partition).toBe(failure.partition);
    }
    // Each key has one owner, and the keys are spread over the instances.
    const owners = new Map<string, Set<string>>();
    for (const d of deliveries) owners.set(d.key, (owners.get(d.key) ?? new Set()).add(d.instance));
    for (const owner of owners.values()) expect(owner.size).toBe(1);
    expect(new Set([...owners.values()].flatMap((o) => [...o])).size).toBeGreaterThan(1);
  });
});
