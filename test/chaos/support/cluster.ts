// The multi-broker cluster of the cluster fault scenarios (scripts/lib/cluster.mjs): a client of the kind under test
// on both brokers, the admin calls that move a topic, and a steady stream of traffic to run a fault under.
import {
  clusterSettings,
  ensureCluster,
  stopCluster,
  topicOwner,
  type ClusterBroker,
  type ClusterSettings,
} from '../../../scripts/lib/cluster.mjs';
import type { PulsarClientLike } from '../../../lib/index.js';
import type { PulsarProducer } from '../../../lib/pulsar/index.js';
import { loadNative, onNative } from '../../support/broker.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { validMessage } from './harness.js';
import type { Ledger } from './ledger.js';

const owner = (): string => process.env.BQ_CLUSTER_OWNER ?? `jest-${process.ppid}`;

/** Starts the cluster on first use (owned by this test run), or reuses the one that answers. */
export async function useCluster(): Promise<ClusterSettings> {
  await ensureCluster(owner());
  return clusterSettings();
}

/** Stops the cluster at the end of a file, unless the test runner stops it after both clients' runs. */
export async function releaseCluster(): Promise<void> {
  if (process.env.BQ_CLUSTER_DEFER_STOP !== '1') await stopCluster(clusterSettings(), owner());
}

/** A client of the kind under test that knows both brokers. */
export const clusterClient = (settings: ClusterSettings): PulsarClientLike =>
  onNative()
    ? new (loadNative().Client)({ serviceUrl: settings.serviceUrl, operationTimeoutSeconds: 30 })
    : new PulsarWebSocketClient({
        serviceUrl: settings.webUrl,
        operationTimeoutMs: 10_000,
        reconnect: { initialDelayMs: 50, maxDelayMs: 1000 },
      });

const fullName = (topic: string): string => `persistent://public/default/${topic}`;

/** An admin call to any broker that answers; a request for a topic another broker owns is redirected there. */
async function admin(settings: ClusterSettings, method: string, apiPath: string): Promise<string> {
  let last = '';
  for (const broker of settings.brokers) {
    try {
      const response = await fetch(`${broker.webUrl}${apiPath}`, { method, signal: AbortSignal.timeout(30_000) });
      const body = await response.text();
      if (response.ok) return body;
      last = `HTTP ${response.status} ${body}`;
    } catch (error) {
      last = String(error);
    }
  }
  throw new Error(`${method} ${apiPath}: ${last}`);
}

export async function ownerOf(settings: ClusterSettings, topic: string): Promise<ClusterBroker> {
  const broker = await topicOwner(fullName(topic), settings);
  if (!broker) throw new Error(`no broker owns ${topic}`);
  return broker;
}

const bundleOf = (settings: ClusterSettings, topic: string): Promise<string> =>
  admin(settings, 'GET', `/lookup/v2/topic/persistent/public/default/${topic}/bundle`);

/** Unloads the topic's bundle onto the other broker: the topic's ownership moves. */
export async function moveTopic(settings: ClusterSettings, topic: string): Promise<ClusterBroker> {
  const from = await ownerOf(settings, topic);
  const to = settings.brokers.find((broker) => broker.name !== from.name)!;
  const bundle = await bundleOf(settings, topic);
  await admin(settings, 'PUT', `/admin/v2/namespaces/public/default/${bundle}/unload?destinationBroker=${to.id}`);
  return to;
}

/** Splits the topic's bundle in two and unloads both halves. */
export async function splitBundle(
  settings: ClusterSettings,
  topic: string,
): Promise<{ before: string; after: string }> {
  const before = await bundleOf(settings, topic);
  await admin(settings, 'PUT', `/admin/v2/namespaces/public/default/${before}/split?unload=true`);
  return { before, after: await bundleOf(settings, topic) };
}

/**
 * Sends `m:<n>` messages one after another every `intervalMs` until stopped. A send that fails may or may not have
 * been stored: it is kept and sent again, with the same key, when the stream stops.
 */
export function trafficStream(
  producer: PulsarProducer,
  urn: string,
  topic: string,
  ledger: Ledger,
  { intervalMs = 25 } = {},
): { sentAt: Map<string, number>; sent(): number; stop(): Promise<string[]> } {
  const sentAt = new Map<string, number>();
  const unconfirmed: string[] = [];
  let running = true;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const key = `m:${n++}`;
      ledger.markSent(key);
      sentAt.set(key, Date.now());
      try {
        await producer.send(validMessage(urn, topic, key));
      } catch {
        unconfirmed.push(key);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    sentAt,
    sent: () => n,
    async stop() {
      running = false;
      await loop;
      const retried: string[] = [];
      for (const key of unconfirmed.splice(0)) {
        try {
          await producer.send(validMessage(urn, topic, key));
        } catch {
          retried.push(key);
        }
      }
      return retried;
    },
  };
}
