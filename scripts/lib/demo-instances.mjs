// npm run demo -- --instances N: N app instances (child processes) on one Key_Shared subscription of a
// 4-partition topic; one is killed mid-stream. Prints handled per instance, lost, duplicates and per-key order
// violations; succeeds only when nothing is lost and per-key order held.
import { randomUUID } from 'node:crypto';
import { register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  analyse,
  createPartitionedTopic,
  deletePartitionedTopic,
  describeRun,
  startInstances,
  ticks,
} from './scale-run.mjs';
import { root } from './sample-app.mjs';

const PARTITIONS = 4;
/** The URN test/support/scale/instance.ts handles. */
const SCALE_URN = 'urn:babel:scale:tick';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await sleep(50);
}

/** Runs the scenario against the broker at webUrl with the client serviceUrl selects; resolves to an exit code. */
export async function runInstancesDemo({ count, webUrl, serviceUrl, say }) {
  if (!Number.isInteger(count) || count < 2) throw new Error(`--instances must be a whole number >= 2`);
  // The library itself, from its TypeScript sources (as the instances run it).
  register('./ts/hooks.mjs', import.meta.url);
  const lib = await import(pathToFileURL(path.join(root, 'lib/index.ts')).href);
  const pulsar = await import(pathToFileURL(path.join(root, 'lib/pulsar/index.ts')).href);
  const topic = `orders-scale-${randomUUID().slice(0, 8)}`;
  await createPartitionedTopic(webUrl, topic, PARTITIONS);
  say(`${topic}: ${PARTITIONS} partitions; starting ${count} instances on one Key_Shared subscription (${serviceUrl})`);
  let instances = [];
  const { client } = await pulsar.createPulsarClient({ serviceUrl });
  try {
    instances = await startInstances(count, {
      SCALE_SERVICE_URL: serviceUrl,
      SCALE_TOPIC: topic,
      SCALE_SUBSCRIPTION_TYPE: 'KeyShared',
      SCALE_HANDLER_MS: '5',
      SCALE_CONCURRENCY: '2',
      SCALE_FAIL_EVERY: '10',
    });
    const published = ticks(12, 50);
    say(`publishing ${published.length} messages over 12 keys; seq 10, 20, … of every key fails once (retry copy)`);
    const publisher = new lib.BabelPulsarClient({ client, topic });
    const publishing = (async () => {
      for (let i = 0; i < published.length; i += 50) {
        await Promise.all(published.slice(i, i + 50).map((t) => publisher.publish(SCALE_URN, t, { key: t.key })));
      }
    })();
    const handled = () => instances.reduce((n, i) => n + i.deliveries().filter((d) => d.t === 'handled').length, 0);
    await until(() => handled() >= published.length / 3, 60_000);
    const victim = instances[1];
    say(`killing ${victim.name} (SIGKILL, pid ${victim.pid}) after ${handled()} messages were handled`);
    await victim.kill();
    await publishing;
    await publisher.close();
    await until(() => analyse(instances, published).lost === 0, 60_000);
    await sleep(500);
    const summary = analyse(instances, published);
    console.log(`\n${describeRun(`Key_Shared, ${count} instances, ${victim.name} killed mid-stream`, summary)}\n`);
    const ok = summary.lost === 0 && summary.orderViolations === 0;
    say(ok ? 'nothing lost, per-key order held' : 'UNEXPECTED: see the counts above');
    return ok ? 0 : 1;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await client.close();
    await deletePartitionedTopic(webUrl, topic);
  }
}
