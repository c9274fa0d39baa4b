// The exactly-once scenario (docs/exactly-once.md), shared by test/chaos/exactly-once.test.ts (its own broker: three
// kills, a broker restart, 10,000 messages) and test/integration/inbox/instances-killed.test.ts (the shared broker:
// no broker restart, fewer messages). Two app instances (child processes, test/support/outbox/inbox-instance.ts) on
// one Shared subscription; each handler inserts a business row and ctx.publish()es one follow-up in the inbox's
// transaction; 10% fail once. Instances are killed with SIGKILL mid-handler and restarted under their names (so
// their relays keep their producer names); then dead-letter records of ids already handled are redriven.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  BabelQueueRedrive,
  EnvelopeCodec,
  outboxMigrationSql,
  type Envelope,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { deadLetterProperties, deadLetterRecord } from '../../../lib/envelope/index.js';
import { inboxMigrationSql } from '../../../lib/inbox/index.js';
import { BQ, pulsarProperties, type PulsarMessage } from '../../../lib/pulsar/index.js';
import { waitFor } from '../broker.js';

const URN = 'urn:babel:orders:placed';
/** The follow-ups' topics live in this namespace, whose deduplication the scenario turns on. */
export const DEDUP_NAMESPACE = 'public/babelqueue-dedup';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const INSTANCE = path.join(root, 'test/support/outbox/inbox-instance.ts');
const TS_REGISTER = path.join(root, 'scripts/lib/ts/register.mjs');

export interface ExactlyOnceRun {
  /** The broker's admin/WebSocket URL and the service URL of the client under test. */
  webUrl: string;
  serviceUrl: string;
  /** Makes a client of the kind under test (publisher, redrive), and a WebSocket observer of the follow-ups. */
  client: () => PulsarClientLike;
  observer: () => PulsarClientLike;
  messages: number;
  redriven: number;
  /** How long each handler holds its transaction after its writes, ms: long enough for kills to land mid-stream. */
  handlerMs: number;
  /** Disruptions, each once this share of the messages was handled: kill -9 of an instance, or anything else. */
  plan: Array<{ share: number; what: string; act: 'kill a' | 'kill b' | (() => Promise<unknown>) }>;
}

export interface ExactlyOnceResult {
  steps: string[];
  businessRows: number;
  distinctBusinessRows: number;
  inboxRows: number;
  outboxRows: number;
  /** Follow-ups stored on the topic, the orders they answer, the copies beyond the first. */
  followUpsStored: number;
  followUpOrders: number;
  followUpDistinctIds: number;
  duplicateFollowUps: number;
  redriven: number;
}

interface Instance {
  name: string;
  child: ChildProcess;
  exited: Promise<unknown>;
}

/** Starts one instance and resolves once it printed that it listens. */
async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, INSTANCE], {
    cwd: root,
    env: { ...process.env, ...env, EO_INSTANCE: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const errors: string[] = [];
  let ready = false;
  child.stdout!.on('data', (chunk) => {
    if (String(chunk).includes('"t":"ready"')) ready = true;
  });
  child.stderr!.on('data', (chunk) => errors.push(String(chunk)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  await waitFor(
    `instance ${name} ready`,
    () => {
      if (child.exitCode !== null) throw new Error(`instance ${name} exited:\n${errors.join('')}`);
      return ready;
    },
    120_000,
  );
  return { name, child, exited };
}

async function killNine(instance: Instance): Promise<void> {
  instance.child.kill('SIGKILL');
  await instance.exited;
  instance.child.stdout?.destroy();
  instance.child.stderr?.destroy();
}

type Admin = (pathAndQuery: string, init?: RequestInit) => Promise<Response>;

async function deduplicatingNamespace(admin: Admin): Promise<void> {
  const created = await admin(`namespaces/${DEDUP_NAMESPACE}`, { method: 'PUT' });
  if (!created.ok && created.status !== 409) throw new Error(`creating ${DEDUP_NAMESPACE}: HTTP ${created.status}`);
  const enabled = await admin(`namespaces/${DEDUP_NAMESPACE}/deduplication`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'true',
  });
  if (!enabled.ok) throw new Error(`enabling deduplication on ${DEDUP_NAMESPACE}: HTTP ${enabled.status}`);
}

async function count(pool: pg.Pool, sql: string): Promise<number> {
  return Number((await pool.query<{ n: string }>(sql)).rows[0]!.n);
}

/** Runs the scenario and returns what it counted; the caller asserts. */
export async function runExactlyOnce(run: ExactlyOnceRun): Promise<ExactlyOnceResult> {
  const admin: Admin = (pathAndQuery, init) => fetch(`${run.webUrl}/admin/v2/${pathAndQuery}`, init);
  const tag = randomUUID().replaceAll('-', '').slice(0, 10);
  const topic = `eo-${tag}`;
  const followTopic = `persistent://${DEDUP_NAMESPACE}/eo-follow-${tag}`;
  const pgUrl = process.env.BQ_PG_URL ?? 'postgres://postgres@127.0.0.1:15432/postgres';
  const pool = new pg.Pool({ connectionString: pgUrl, max: 4 });
  await pool.query(inboxMigrationSql(`inbox_${tag}`));
  await pool.query(outboxMigrationSql(`outbox_${tag}`));
  await pool.query(`CREATE TABLE orders_${tag} (message_id text NOT NULL, n integer NOT NULL, instance text NOT NULL)`);
  await deduplicatingNamespace(admin);

  const client = run.client();
  const observer = run.observer();
  const follow = await observer.subscribe({ topic: followTopic, subscription: 'check' });
  const env = {
    EO_SERVICE_URL: run.serviceUrl,
    EO_TOPIC: topic,
    EO_FOLLOW_TOPIC: followTopic,
    EO_TABLES: tag,
    EO_HANDLER_MS: String(run.handlerMs),
    EO_FAIL_EVERY: '10',
    BQ_PG_URL: pgUrl,
  };
  const instances = new Map<string, Instance>();
  const envelopes: Envelope[] = Array.from({ length: run.messages }, (_, i) =>
    EnvelopeCodec.make(URN, { n: i + 1 }, { queue: topic }),
  );
  const handled = () => count(pool, `SELECT count(DISTINCT message_id) AS n FROM orders_${tag}`);
  const steps: string[] = [];
  try {
    for (const name of ['a', 'b']) instances.set(name, await startInstance(name, env));
    // A long send time-out: a broker restart delays these sends instead of failing them.
    const producer = await client.createProducer({ topic, sendTimeoutMs: 300_000 } as never);
    const publishing = (async () => {
      for (let at = 0; at < envelopes.length; at += 100) {
        await Promise.all(
          envelopes
            .slice(at, at + 100)
            .map((envelope) =>
              producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) }),
            ),
        );
      }
    })();
    // A killed instance is started again in the background, so the other one goes on meanwhile and the next
    // disruption lands mid-stream too; killing an instance again waits for its restart first.
    const restarts = new Map<string, Promise<void>>();
    const restart = async (name: string) => {
      await restarts.get(name);
      await killNine(instances.get(name)!);
      restarts.set(
        name,
        startInstance(name, env).then((instance) => void instances.set(name, instance)),
      );
    };
    for (const { share, what, act } of run.plan) {
      await waitFor(
        `${Math.round(share * 100)}% handled`,
        async () => (await handled()) >= share * run.messages,
        600_000,
      );
      steps.push(`${what} at ${await handled()}`);
      if (act === 'kill a') await restart('a');
      else if (act === 'kill b') await restart('b');
      else {
        // Instances still starting would meet the disruption at start-up, which fails fast when nothing listens:
        // a supervisor would start them again; here they are up before the broker goes down.
        await Promise.all(restarts.values());
        await act();
      }
    }
    await Promise.all(restarts.values());
    await publishing;
    await producer.close();
    await waitFor('every message handled', async () => (await handled()) === run.messages, 600_000);

    // Dead-letter records of ids already handled, redriven: the inbox acknowledges them without running.
    const dlq = `${topic}.dlq`;
    const redrive = new BabelQueueRedrive(client);
    await redrive.run({ topic: dlq, dryRun: true, idleTimeoutMs: 200 }); // its subscription, before the records
    const dlqProducer = await client.createProducer({ topic: dlq });
    for (const envelope of envelopes.slice(0, run.redriven)) {
      const facts = { reason: 'failed' as const, attempts: 3, originalQueue: topic };
      const record = deadLetterRecord(envelope, { ...facts, error: new Error('chaos') });
      await dlqProducer.send({
        data: EnvelopeCodec.encodeToBuffer(record),
        properties: {
          ...pulsarProperties(record),
          ...deadLetterProperties({ ...facts, error: 'chaos', failedAt: Date.now() }),
        },
      });
    }
    await dlqProducer.close();
    const result = await redrive.run({ topic: dlq, reason: 'failed' });

    // Every message terminal: nothing left on the subscription, nothing pending in the outbox.
    let lastStats: unknown = null;
    await waitFor(
      'an empty backlog',
      async () => {
        const stats = (await (await admin(`persistent/public/default/${topic}/stats`)).json()) as {
          subscriptions: Record<string, { msgBacklog: number; unackedMessages: number }>;
        };
        const subscription = stats.subscriptions['exactly-once'];
        lastStats = subscription;
        return subscription !== undefined && subscription.msgBacklog === 0 && subscription.unackedMessages === 0;
      },
      600_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the subscription: ${JSON.stringify(lastStats)}`);
    });
    await waitFor(
      'every follow-up relayed',
      async () => (await count(pool, `SELECT count(*) AS n FROM outbox_${tag} WHERE published_at IS NULL`)) === 0,
      600_000,
    );

    // The follow-ups on the topic, by the order each answers (a follow-up's meta.id is its own).
    const local = followTopic.split('/').pop()!;
    const internal = await admin(`persistent/${DEDUP_NAMESPACE}/${local}/internalStats`);
    const stored = ((await internal.json()) as { numberOfEntries: number }).numberOfEntries;
    const orders = new Map<string, number>();
    const followIds = new Set<string>();
    for (let received = 0; received < stored; received++) {
      const message: PulsarMessage = await follow.receive(30_000);
      await follow.acknowledge(message);
      followIds.add(message.getProperties()[BQ.messageId]!);
      const order = (JSON.parse(message.getData().toString('utf8')) as { data: { order: string } }).data.order;
      orders.set(order, (orders.get(order) ?? 0) + 1);
    }
    return {
      steps,
      businessRows: await count(pool, `SELECT count(*) AS n FROM orders_${tag}`),
      distinctBusinessRows: await handled(),
      inboxRows: await count(pool, `SELECT count(*) AS n FROM inbox_${tag}`),
      outboxRows: await count(pool, `SELECT count(*) AS n FROM outbox_${tag}`),
      followUpsStored: stored,
      followUpOrders: orders.size,
      followUpDistinctIds: followIds.size,
      duplicateFollowUps: [...orders.values()].reduce((sum, copies) => sum + copies - 1, 0),
      redriven: result.redriven,
    };
  } finally {
    await Promise.all(
      [...instances.values()].map(async (instance) => {
        if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGTERM');
        await Promise.race([instance.exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
        if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGKILL');
        instance.child.stdout?.destroy();
        instance.child.stderr?.destroy();
      }),
    );
    await follow.close().catch(() => undefined);
    await observer.close().catch(() => undefined);
    await client.close().catch(() => undefined);
    await pool.end();
  }
}
