// Scale-out runs: several app instances (test/support/scale/instance.ts, one child process each) on one
// subscription of a partitioned topic. Used by test/integration/scale and `npm run demo -- --instances N`.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { root } from './sample-app.mjs';

const INSTANCE_APP = path.join(root, 'test/support/scale/instance.ts');
const TS_REGISTER = path.join(root, 'scripts/lib/ts/register.mjs');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates `persistent://public/default/<topic>` with `partitions` partitions through the admin API. */
export async function createPartitionedTopic(webUrl, topic, partitions) {
  const response = await fetch(`${webUrl}/admin/v2/persistent/public/default/${topic}/partitions`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(partitions),
  });
  if (!response.ok) throw new Error(`creating ${topic} with ${partitions} partitions: HTTP ${response.status}`);
}

/** Deletes a partitioned topic and its partitions (best effort: a leftover costs disk, not correctness). */
export async function deletePartitionedTopic(webUrl, topic) {
  await fetch(`${webUrl}/admin/v2/persistent/public/default/${topic}/partitions?force=true`, {
    method: 'DELETE',
  }).catch(() => undefined);
}

/**
 * Starts one instance: `env` gives SCALE_SERVICE_URL, SCALE_TOPIC and the optional SCALE_* settings of
 * instance.ts (or of `app`, another instance program that reports JSON lines the same way). Resolves once its
 * server is listening.
 */
export async function startInstance(name, env, timeoutMs = 90_000, app = INSTANCE_APP) {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, app], {
    cwd: root,
    env: { ...process.env, ...env, SCALE_INSTANCE: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const records = [];
  const errors = [];
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += String(chunk);
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) if (line.trim()) records.push(JSON.parse(line));
  });
  child.stderr.on('data', (chunk) => errors.push(String(chunk)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const deadline = Date.now() + timeoutMs;
  while (!records.some((r) => r.t === 'ready')) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`instance ${name} exited before it was ready:\n${errors.join('')}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`instance ${name} was not ready within ${timeoutMs} ms:\n${errors.join('')}`);
    }
    await sleep(50);
  }
  return {
    name,
    records,
    errors,
    pid: child.pid,
    /** Deliveries reported so far (handled and failed). */
    deliveries: () => records.filter((r) => r.t !== 'ready'),
    /** Ends the process at once, as a crash would: nothing is drained, nothing acknowledged any more. */
    kill: async () => {
      child.kill('SIGKILL');
      return exited;
    },
    /** A graceful stop (SIGTERM: drain, then close); SIGKILL after 20 s. */
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      let timer;
      const timedOut = new Promise((resolve) => {
        timer = setTimeout(() => resolve('timeout'), 20_000);
      });
      const code = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (code === 'timeout') child.kill('SIGKILL');
      return code;
    },
  };
}

/** Starts `count` instances at once, named i1, i2, …; stops those already started when one fails. */
export async function startInstances(count, env) {
  const started = await Promise.allSettled(Array.from({ length: count }, (_, i) => startInstance(`i${i + 1}`, env)));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(started.filter((s) => s.status === 'fulfilled').map((s) => s.value.kill()));
    throw failed.reason;
  }
  return started.map((s) => s.value);
}

/** The ticks of a run: `perKey` messages for each of `keys` keys, interleaved key by key, seq from 1. */
export function ticks(keys, perKey) {
  const all = [];
  for (let seq = 1; seq <= perKey; seq++) for (let k = 0; k < keys; k++) all.push({ key: `key-${k}`, seq });
  return all;
}

/**
 * What a run did, from the instances' reports:
 * - handledPerInstance: successful deliveries per instance (redeliveries included);
 * - lost: published ticks never handled successfully; duplicates: successful deliveries beyond the first;
 * - orderViolations: per key, ticks handled successfully on their first delivery (attempt 0) whose first
 *   success came before that of a smaller seq of the same key, across all instances (wall-clock order);
 * - retried: ticks that failed once; retriesOnSameInstance: of those, how many had their retry handled by the
 *   instance that failed them; retriesBehindLaterSeqs: retried ticks handled after a larger seq of their key
 *   (a retry copy joins the back of its key's line).
 */
export function analyse(instances, published) {
  const deliveries = instances.flatMap((i) => i.deliveries()).sort((a, b) => a.at - b.at);
  const handled = deliveries.filter((d) => d.t === 'handled');
  const firstSuccess = new Map();
  let duplicates = 0;
  for (const d of handled) {
    const id = `${d.key}#${d.seq}`;
    if (firstSuccess.has(id)) duplicates += 1;
    else firstSuccess.set(id, d);
  }
  const lost = published.filter((t) => !firstSuccess.has(`${t.key}#${t.seq}`));
  const byKey = new Map();
  for (const d of firstSuccess.values()) {
    if (!byKey.has(d.key)) byKey.set(d.key, []);
    byKey.get(d.key).push(d);
  }
  let orderViolations = 0;
  let retriesBehindLaterSeqs = 0;
  for (const line of byKey.values()) {
    line.sort((a, b) => a.at - b.at);
    let highestFirstTry = 0;
    let highestAny = 0;
    for (const d of line) {
      if (d.attempt === 0) {
        if (d.seq < highestFirstTry) orderViolations += 1;
        highestFirstTry = Math.max(highestFirstTry, d.seq);
      } else if (d.seq < highestAny) {
        retriesBehindLaterSeqs += 1;
      }
      highestAny = Math.max(highestAny, d.seq);
    }
  }
  const failures = deliveries.filter((d) => d.t === 'failed' && d.attempt === 0);
  const retriesOnSameInstance = failures.filter((f) =>
    handled.some((d) => d.key === f.key && d.seq === f.seq && d.attempt > 0 && d.instance === f.instance),
  ).length;
  return {
    published: published.length,
    handledPerInstance: Object.fromEntries(
      instances.map((i) => [i.name, i.deliveries().filter((d) => d.t === 'handled').length]),
    ),
    partitionsPerInstance: Object.fromEntries(
      instances.map((i) => [i.name, [...new Set(i.deliveries().map((d) => d.partition))].sort((a, b) => a - b)]),
    ),
    lost: lost.length,
    duplicates,
    orderViolations,
    retried: failures.length,
    retriesOnSameInstance,
    retriesBehindLaterSeqs,
    topics: [...new Set(deliveries.map((d) => d.topic))],
    queues: [...new Set(deliveries.map((d) => d.queue))],
  };
}

/** One line per figure, for test output and the demo. */
export function describeRun(label, summary) {
  const perInstance = Object.entries(summary.handledPerInstance)
    .map(([name, n]) => `${name}=${n} (partitions ${summary.partitionsPerInstance[name].join(',')})`)
    .join(' ');
  return [
    `[scale] ${label}`,
    `  published ${summary.published}; handled per instance: ${perInstance}`,
    `  lost ${summary.lost}, duplicates ${summary.duplicates}, order violations ${summary.orderViolations}`,
    `  retried ${summary.retried}: retry handled by the same instance ${summary.retriesOnSameInstance}, ` +
      `behind a later seq of its key ${summary.retriesBehindLaterSeqs}`,
    `  getTopic(): ${summary.topics.join(', ')}; meta.queue: ${summary.queues.join(', ')}`,
  ].join('\n');
}
