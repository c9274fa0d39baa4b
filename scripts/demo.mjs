#!/usr/bin/env node
// npm run demo: runs the sample app end to end against a local Pulsar broker and prints what happened to
// each message, then the redrive loop: an order dead-lettered for a reason in the app's state (its customer is not
// registered), the fix (register the customer), `babelqueue-pulsar redrive` and the redriven order handled.
// Exits 0 only when every check has the expected outcome.
//
//   npm run demo                       # the native pulsar-client (built once if needed), else the WebSocket client
//   npm run demo -- --client websocket # the built-in WebSocket client
//   npm run demo -- --client native    # the native client, or fail
//   npm run demo -- --instances 3      # 3 app instances on a partitioned topic, one killed mid-stream
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { brokerAnswers, brokerSettings, startBroker, stopBroker } from './lib/broker.mjs';
import { runInstancesDemo } from './lib/demo-instances.mjs';
import { ensureNativeClient, NATIVE_INPUTS } from './lib/native-client.mjs';
import { buildSampleApp, freePort, root, startSampleApp } from './lib/sample-app.mjs';

const say = (message) => console.log(`[demo] ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const began = Date.now();

async function post(base, route, body) {
  const response = await fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${route}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()).id;
}

const getJson = async (base, route) => (await fetch(`${base}${route}`)).json();

/** Publishes a message the sample app's HTTP API cannot make: raw bytes, an unknown URN, a future schema version. */
async function publishRaw(lib, client, topic, payload, properties) {
  const producer = await client.createProducer({ topic });
  try {
    await producer.send({ data: payload, properties });
  } finally {
    await producer.close();
  }
}

async function sendTraffic(app, lib, client, topic) {
  const { EnvelopeCodec, pulsarProperties } = lib;
  const cases = [];
  // sentAt is taken before the request, so "took" never undercounts (a delay is measured from before publishing).
  const add = async (name, expected, send, extra = {}) => {
    const sentAt = Date.now();
    cases.push({ name, expected, id: await send(), sentAt, ...extra });
  };
  const order =
    (body, query = '') =>
    () =>
      post(app.base, `/orders${query}`, body);
  await add('order A-1', 'handled', order({ order_id: 'A-1', sku: 'BOOK', quantity: 1 }));
  await add('order A-2 (ünïcödé sku)', 'handled', order({ order_id: 'A-2', sku: 'ŽLUŤOUČKÝ-KŮŇ', quantity: 3 }));
  await add('payment for A-1', 'handled after 2 retries', () =>
    post(app.base, '/payments', { order_id: 'A-1', amount: 12.5 }),
  );
  await add(
    'order A-3, out of stock',
    'dead-lettered: failed',
    order({ order_id: 'A-3', sku: 'OUT-OF-STOCK', quantity: 1 }),
  );
  await add(
    'order A-4, quantity 0 (pipe)',
    'dead-lettered: failed',
    order({ order_id: 'A-4', sku: 'BOOK', quantity: 0 }),
  );
  const delayMs = 3000;
  await add(
    `order A-5, delayed ${delayMs} ms`,
    'handled after the delay',
    order({ order_id: 'A-5', sku: 'PEN', quantity: 2 }, `?delayMs=${delayMs}`),
    { delayMs },
  );

  const poisonId = randomUUID();
  const poisonSent = Date.now();
  await publishRaw(lib, client, topic, Buffer.from([0x7b, 0x22, 0x6a, 0x6f, 0x62, 0x22, 0x3a, 0xc3, 0x28, 0xff]), {
    'bq-job': 'urn:babel:orders:created',
    'bq-schema-version': '1',
    'bq-message-id': poisonId,
  });
  cases.push({ name: 'invalid UTF-8 bytes', expected: 'dead-lettered: poison', id: poisonId, sentAt: poisonSent });

  const unknown = EnvelopeCodec.make('urn:babel:orders:cancelled', { order_id: 'A-1' }, { queue: topic });
  await add('unknown URN urn:babel:orders:cancelled', 'dead-lettered: unknown_urn', async () => {
    await publishRaw(lib, client, topic, EnvelopeCodec.encodeToBuffer(unknown), pulsarProperties(unknown));
    return unknown.meta.id;
  });

  const future = EnvelopeCodec.make(
    'urn:babel:orders:created',
    { order_id: 'A-6', sku: 'BOOK', quantity: 1 },
    { queue: topic },
  );
  await add('bq-schema-version "2"', 'acknowledged by the schema gate', async () => {
    await publishRaw(lib, client, topic, EnvelopeCodec.encodeToBuffer(future), {
      ...pulsarProperties(future),
      'bq-schema-version': '2',
    });
    return future.meta.id;
  });
  // Fails for a reason in the app's state, not in the message: fixed and redriven after the traffic settled.
  await add(
    'order A-7, customer C-7 not registered',
    'dead-lettered: failed',
    order({ order_id: 'A-7', sku: 'BOOK', quantity: 1, customer: 'C-7' }),
  );
  return cases;
}

/** What happened to one case, from the app's views (dead letters are read back from the broker). */
function outcomeOf(testCase, views) {
  const handled = views.handled.find((h) => h.messageId === testCase.id);
  if (handled) {
    const delayed = testCase.delayMs !== undefined && handled.handledAt - testCase.sentAt >= testCase.delayMs;
    const outcome =
      testCase.delayMs !== undefined
        ? delayed
          ? 'handled after the delay'
          : 'handled too early'
        : handled.attempts === 0
          ? 'handled'
          : `handled after ${handled.attempts} retries`;
    return { outcome, at: handled.handledAt };
  }
  const dead = views.deadLetters.find((d) => (d.body?.meta?.id ?? d.properties['bq-message-id']) === testCase.id);
  if (dead) {
    const attempts = dead.properties['bq-dead-letter-attempts'];
    return {
      outcome: `dead-lettered: ${dead.properties['bq-dead-letter-reason']}`,
      detail: `${attempts} attempt(s); ${dead.properties['bq-dead-letter-error'] ?? ''}`,
      at: Number(dead.properties['bq-dead-letter-failed-at']),
    };
  }
  const rejected = views.rejected.find((r) => r.messageId === testCase.id);
  if (rejected) return { outcome: 'acknowledged by the schema gate', at: rejected.at };
  return null;
}

async function collect(app, cases) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const [handled, settlements, deadLetters] = await Promise.all([
      getJson(app.base, '/orders'),
      getJson(app.base, '/settlements'),
      getJson(app.base, '/dead-letters'),
    ]);
    const views = { handled, rejected: settlements.rejected, deadLetters };
    const results = cases.map((c) => ({ ...c, result: outcomeOf(c, views) }));
    if (results.every((r) => r.result) || Date.now() > deadline) return results;
    await sleep(500);
  }
}

function printTable(results, first = 1) {
  const rows = results.map((r, i) => [
    String(first + i),
    r.name,
    r.expected,
    r.result ? r.result.outcome : 'no outcome yet',
    r.result?.detail ?? '',
    r.result ? `${Math.max(0, r.result.at - r.sentAt)} ms` : '-',
    r.result?.outcome === r.expected ? 'ok' : 'UNEXPECTED',
  ]);
  const header = ['#', 'message', 'expected', 'outcome', 'detail', 'took', ''];
  const widths = header.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((row) => row[i].length))));
  const line = (cells) => cells.map((cell, i) => cell.slice(0, 60).padEnd(widths[i])).join('  ');
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
}

/** Runs the package's built `babelqueue-pulsar` command (its package.json "bin") and shows what it printed. */
function babelqueuePulsar(args, serviceUrl) {
  say(`$ babelqueue-pulsar ${args.join(' ')}`);
  const run = spawnSync(process.execPath, [path.join(root, 'dist/esm/cli/babelqueue-pulsar.js'), ...args], {
    cwd: root,
    env: { ...process.env, BABELQUEUE_PULSAR_SERVICE_URL: serviceUrl },
    encoding: 'utf8',
    timeout: 60_000,
  });
  // --json prints the report alone; without it, the progress lines.
  const jsonAt = run.stdout.startsWith('{') ? 0 : run.stdout.indexOf('\n{');
  const lines = (jsonAt < 0 ? run.stdout : run.stdout.slice(0, jsonAt)).trim();
  for (const line of lines.split('\n').filter(Boolean)) console.log(`         ${line}`);
  if (run.stderr.trim()) console.log(run.stderr.trim());
  if (run.status !== 0) throw new Error(`babelqueue-pulsar ${args[0]} exited with ${run.status ?? run.signal}`);
  return jsonAt < 0 ? null : JSON.parse(run.stdout.slice(jsonAt));
}

/**
 * The redrive loop, after the traffic settled: A-7 sits in the DLQ because customer C-7 was not registered.
 * Register C-7 (the fix), redrive C-7's orders through the app's BabelQueueRedrive, check that A-7 is handled and
 * that the rest stayed in the DLQ (`babelqueue-pulsar redrive --dry-run`).
 */
async function redriveLoop(app, cases, dlqTopic, serviceUrl) {
  const steps = [];
  const step = async (name, expected, run) => {
    const sentAt = Date.now();
    const { outcome, detail = '' } = await run();
    steps.push({ name, expected, sentAt, result: { outcome, detail, at: Date.now() } });
  };
  const idOf = (orderId) => cases.find((c) => c.name.startsWith(`order ${orderId}`)).id;
  const a7 = idOf('A-7');
  const counts = (report) => `redriven ${report.redriven}, skipped ${report.skipped}, kept ${report.kept}`;

  await step('fix: register customer C-7 (POST /customers)', 'registered', async () => {
    say('the fix: POST /customers {"id":"C-7"}');
    await post(app.base, '/customers', { id: 'C-7' });
    const registered = (await getJson(app.base, '/customers')).includes('C-7');
    return { outcome: registered ? 'registered' : 'not registered', detail: 'app state; the message is fine' };
  });

  const [a7Record] = (await getJson(app.base, '/dead-letters')).filter((d) => d.body?.meta?.id === a7);
  // Only C-7's orders: A-3 and A-4 would fail again and come back while the run still reads. No bypass either:
  // A-7's handler failed before any side effect, so a replay has nothing to skip.
  await step('POST /dead-letters/redrive {customer: C-7}', 'redriven 1, skipped 3, kept 1', async () => {
    say(
      'POST /dead-letters/redrive {"customer":"C-7"}: the app\'s BabelQueueRedrive.run({ topic: "<topic>.dlq", ' +
        'reason: "failed", urn: "urn:babel:orders:created", select: order of C-7 })',
    );
    const response = await fetch(`${app.base}/dead-letters/redrive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customer: 'C-7' }),
    });
    if (!response.ok) return { outcome: `HTTP ${response.status}`, detail: await response.text() };
    const report = await response.json();
    const redriven = report.items.filter((item) => item.outcome === 'redriven').map((item) => item.id);
    return {
      outcome: redriven.length === 1 && redriven[0] === a7 ? counts(report) : `redriven ${redriven.join(', ')}`,
      detail: 'BabelQueueRedrive, select by customer',
    };
  });

  await step('order A-7 after the redrive', 'handled, same meta.id and trace_id', async () => {
    const deadline = Date.now() + 30_000;
    let handled;
    while (!(handled = (await getJson(app.base, '/orders')).find((h) => h.messageId === a7))) {
      if (Date.now() > deadline) return { outcome: 'not handled' };
      await sleep(300);
    }
    const same = handled.traceId === a7Record?.body?.trace_id;
    return {
      outcome: same ? 'handled, same meta.id and trace_id' : 'handled with another trace_id',
      detail: `attempts ${handled.attempts} (reset); isReplay() ${handled.replay}`,
    };
  });

  await step('DLQ after the redrive (dry run, --reason failed)', 'would redrive 2, skipped 1, kept 1', async () => {
    const report = babelqueuePulsar(
      ['redrive', '--topic', dlqTopic, '--reason', 'failed', '--dry-run', '--json'],
      serviceUrl,
    );
    const planned = report.items.filter((item) => item.outcome === 'planned').map((item) => item.id);
    const left = [idOf('A-3'), idOf('A-4')].every((id) => planned.includes(id)) && !planned.includes(a7);
    return {
      outcome: left
        ? `would redrive ${report.planned}, skipped ${report.skipped}, kept ${report.kept}`
        : `would redrive ${planned.length}: not A-3 and A-4`,
      detail: 'A-3, A-4 left for later; unknown URN, poison kept',
    };
  });
  return steps;
}

/** Which client the demo runs on: as asked, or native when it can be made loadable. */
function chooseClient(asked) {
  if (asked !== undefined && asked !== 'native' && asked !== 'websocket') {
    throw new Error(`--client must be native or websocket, got ${JSON.stringify(asked)}`);
  }
  if (asked === 'websocket') return 'websocket';
  try {
    const { source } = ensureNativeClient();
    say(`native pulsar-client ready (${source === 'built' ? 'built from source just now' : source})`);
    return 'native';
  } catch (error) {
    if (asked === 'native') throw error;
    say(`the native pulsar-client is not available (${error.message.split('\n')[0]}); using the WebSocket client`);
    return 'websocket';
  }
}

async function main() {
  const { values } = parseArgs({ options: { client: { type: 'string' }, instances: { type: 'string' } } });
  const clientKind = chooseClient(values.client);
  const settings = brokerSettings();
  let startedBroker = false;
  let webUrl = process.env.PULSAR_WEB_URL ?? settings.webUrl;
  if (!(await brokerAnswers(webUrl))) {
    if (process.env.PULSAR_WEB_URL) throw new Error(`PULSAR_WEB_URL=${webUrl} does not answer`);
    say('no broker answers on 127.0.0.1; starting Apache Pulsar standalone (first run downloads it, ~1 minute)');
    await startBroker(settings);
    startedBroker = true;
    webUrl = settings.webUrl;
  } else {
    say(`using the broker at ${webUrl}`);
  }
  if (values.instances !== undefined) {
    const serviceUrl = clientKind === 'native' ? (process.env.PULSAR_SERVICE_URL ?? settings.serviceUrl) : webUrl;
    try {
      return await runInstancesDemo({ count: Number(values.instances), webUrl, serviceUrl, say });
    } finally {
      if (startedBroker) await stopBroker(settings);
    }
  }
  let app = null;
  let client = null;
  try {
    say('building the library and the sample app');
    buildSampleApp();
    // The application's entry point and the Pulsar one (the client factory, the bq-* properties).
    const lib = {
      ...(await import(path.join(root, 'dist/esm/index.js'))),
      ...(await import(path.join(root, 'dist/esm/pulsar/index.js'))),
    };
    // A broker of our own gets the plain topic name; a shared one a unique name, so runs never mix.
    const topic = startedBroker ? 'orders' : `orders-demo-${randomUUID().slice(0, 8)}`;
    const port = await freePort();
    const serviceUrl = clientKind === 'native' ? (process.env.PULSAR_SERVICE_URL ?? settings.serviceUrl) : webUrl;
    const clientName =
      clientKind === 'native' ? `native pulsar-client ${NATIVE_INPUTS.addon}` : 'built-in WebSocket client';
    say(`starting the sample app on port ${port}, consuming ${topic}; client: ${clientName} (${serviceUrl})`);
    app = await startSampleApp({
      PORT: String(port),
      ORDERS_TOPIC: topic,
      PULSAR_SERVICE_URL: serviceUrl,
      PULSAR_WEB_URL: webUrl,
    });
    ({ client } = await lib.createPulsarClient({ serviceUrl }));
    // Pulsar keeps a topic's messages only for subscriptions that exist: the redrive subscription is created
    // before any record can reach the DLQ, by a dry run (as the README's Redrive section advises).
    const dlqTopic = `${topic}.dlq`;
    say(`creating the redrive subscription on ${dlqTopic} before any traffic, with a dry run:`);
    babelqueuePulsar(['redrive', '--topic', dlqTopic, '--dry-run'], serviceUrl);
    say(
      'sending traffic: orders, a flaky payment, a poisoned message, an unknown URN, a delayed order, a future schema version, an order of an unregistered customer',
    );
    const cases = await sendTraffic(app, lib, client, topic);
    say('waiting until every message has settled');
    const results = await collect(app, cases);
    printTable(results);
    console.log('');
    say('the redrive loop: fix what made A-7 fail, redrive it, check it was handled and the rest stayed in the DLQ');
    const steps = await redriveLoop(app, cases, dlqTopic, serviceUrl);
    printTable(steps, results.length + 1);
    const checks = [...results, ...steps];
    const failures = checks.filter((r) => r.result?.outcome !== r.expected);
    const code = await app.stop();
    app = null;
    console.log(
      `\nclient: ${clientName}\n${checks.length - failures.length} of ${checks.length} checks as expected (${results.length} messages settled, ${steps.length} redrive steps); app stopped (${code === 'SIGTERM' ? 'graceful SIGTERM shutdown' : `exit ${code}`}); ${Math.round((Date.now() - began) / 1000)} s in all`,
    );
    return failures.length === 0 && (code === 0 || code === 'SIGTERM') ? 0 : 1;
  } finally {
    await client?.close();
    if (app) {
      console.log(app.output.join('').slice(-3000));
      await app.stop();
    }
    if (startedBroker) await stopBroker(settings);
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[demo] failed: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  },
);
