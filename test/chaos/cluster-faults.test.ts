// Chaos on a real two-broker cluster (ZooKeeper, one bookie, two brokers with their WebSocket services; see
// scripts/lib/cluster.mjs), on the client under test given both brokers: while traffic flows, the topic's ownership
// moves (unload), its bundle splits, the broker that owns it is killed with SIGKILL, and both brokers restart one
// after the other. Each scenario prints what became of every message and how long handling stalled; none is lost.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { BabelContext, BabelHandler, type PulsarClientLike } from '../../lib/index.js';
import { killBroker, restartClusterBroker, type ClusterSettings } from '../../scripts/lib/cluster.mjs';
import { onNative } from '../support/broker.js';
import { startService } from '../support/nest-app.js';
import {
  clusterClient,
  moveTopic,
  ownerOf,
  releaseCluster,
  splitBundle,
  trafficStream,
  useCluster,
} from './support/cluster.js';
import { collectDeadLetters, KEY, settleAll, subscribeDeadLetters } from './support/harness.js';
import { Ledger } from './support/ledger.js';

jest.setTimeout(240_000);
const URN = 'urn:babel:chaos:cluster';
const client = onNative() ? 'native' : 'websocket';

let settings: ClusterSettings;

beforeAll(async () => {
  settings = await useCluster();
}, 330_000);

afterAll(async () => {
  await releaseCluster();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** When each key was first handled, to measure how long a fault held handling up. */
class Timeline {
  readonly handledAt = new Map<string, number>();
  private readonly events: number[] = [];

  mark(key: string): void {
    const now = Date.now();
    if (!this.handledAt.has(key)) this.handledAt.set(key, now);
    this.events.push(now);
  }

  /** From `after` to the first handling of a message sent after it. */
  recoveredAfter(after: number, sentAt: Map<string, number>): number | undefined {
    let first: number | undefined;
    for (const [key, sent] of sentAt) {
      const handled = this.handledAt.get(key);
      if (sent >= after && handled !== undefined && (first === undefined || handled < first)) first = handled;
    }
    return first === undefined ? undefined : first - after;
  }

  /** The longest time without any handling between `from` and `to`. */
  longestStall(from: number, to: number): number {
    const inWindow = [from, ...this.events.filter((t) => t > from && t < to).sort((a, b) => a - b), to];
    let longest = 0;
    for (let i = 1; i < inWindow.length; i++) longest = Math.max(longest, inWindow[i]! - inWindow[i - 1]!);
    return longest;
  }
}

/**
 * Runs `fault` under steady traffic: a service consuming the topic, a producer sending every 25 ms from before the
 * fault until two seconds after it, then every unconfirmed send again with its key, and waits until each message
 * was handled or dead-lettered. `fault` resolves to the moment after which the cluster should serve again.
 */
async function underTraffic(scenario: string, fault: (topic: string) => Promise<number>) {
  const topic = `chaos-cluster-${client}-${scenario.replace(/\W+/g, '-')}-${Date.now()}`;
  const pulsar: PulsarClientLike = clusterClient(settings);
  const ledger = new Ledger(`cluster ${scenario} (${client})`);
  const timeline = new Timeline();
  const dlq = collectDeadLetters(await subscribeDeadLetters(pulsar, topic), ledger);
  @Controller()
  class ClusterWork {
    @BabelHandler(URN)
    handle(@Ctx() ctx: BabelContext) {
      const key = ctx.getProperties()[KEY]!;
      ledger.markHandled(key);
      timeline.mark(key);
    }
  }
  const service = await startService([ClusterWork], { client: pulsar, topics: topic, concurrency: 4 });
  const producer = await pulsar.createProducer({ topic, sendTimeoutMs: 60_000 } as never);
  const traffic = trafficStream(producer, URN, topic, ledger);
  let stillUnconfirmed: string[] | undefined;
  let faultStart = 0;
  let faultEnd = 0;
  try {
    while (timeline.handledAt.size < 20) await sleep(50);
    faultStart = Date.now();
    faultEnd = await fault(topic);
    const deadline = Date.now() + 120_000;
    while (timeline.recoveredAfter(faultEnd, traffic.sentAt) === undefined && Date.now() < deadline) await sleep(100);
    await sleep(2000);
    stillUnconfirmed = await traffic.stop();
    await settleAll(ledger, 90_000);
  } finally {
    ledger.print();
    const recovered = timeline.recoveredAfter(faultEnd, traffic.sentAt);
    console.log(
      `[chaos] cluster ${scenario} (${client}): fault took ${faultEnd - faultStart} ms; handling resumed ` +
        `${recovered ?? 'never'} ms after it; longest stall ${timeline.longestStall(faultStart, Date.now())} ms; ` +
        `${traffic.sent()} sent while it ran`,
    );
    await producer.close().catch(() => undefined);
    await service.close();
    await dlq.stop();
    await pulsar.close();
  }
  expect(stillUnconfirmed).toEqual([]);
  expect(ledger.summary()).toMatchObject({ lost: 0 });
  expect(ledger.summary().sent).toBeGreaterThan(20);
}

describe(`a two-broker cluster under faults (${client} client on both brokers)`, () => {
  it('topic unload: ownership moves to the other broker', async () => {
    await underTraffic('topic unload', async (topic) => {
      const before = await ownerOf(settings, topic);
      const to = await moveTopic(settings, topic);
      expect(to.name).not.toBe(before.name);
      return Date.now();
    });
  });

  it('bundle split: the topic lands in a new bundle', async () => {
    await underTraffic('bundle split', async (topic) => {
      const { before, after } = await splitBundle(settings, topic);
      expect(after).not.toBe(before);
      return Date.now();
    });
  });

  it('kill -9 of the broker that owns the topic: it moves to the survivor', async () => {
    let killed = '';
    try {
      await underTraffic('kill -9 of the owner', async (topic) => {
        killed = (await ownerOf(settings, topic)).name;
        await killBroker(killed, settings);
        return Date.now();
      });
    } finally {
      // Back to two brokers for the next scenario.
      if (killed) await restartClusterBroker(killed, settings);
    }
  });

  it('rolling restart of both brokers', async () => {
    await underTraffic('rolling restart', async () => {
      for (const broker of settings.brokers) await restartClusterBroker(broker.name, settings);
      return Date.now();
    });
  });
});
