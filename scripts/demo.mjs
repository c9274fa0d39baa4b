#!/usr/bin/env node
// npm run demo: runs the sample app end to end against a local Pulsar broker and prints what happened to
// each message. Exits 0 only when every outcome is the expected one.
//
//   npm run demo                       # the native pulsar-client (built once if needed), else the WebSocket client
//   npm run demo -- --client websocket # the built-in WebSocket client
//   npm run demo -- --client native    # the native client, or fail
//   npm run demo -- --instances 3      # 3 app instances on a partitioned topic, one killed mid-stream
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

function printTable(results) {
  const rows = results.map((r, i) => [
    String(i + 1),
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
    const lib = await import(path.join(root, 'dist/esm/index.js'));
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
    say(
      'sending traffic: orders, a flaky payment, a poisoned message, an unknown URN, a delayed order, a future schema version',
    );
    const cases = await sendTraffic(app, lib, client, topic);
    say('waiting until every message has settled');
    const results = await collect(app, cases);
    printTable(results);
    const failures = results.filter((r) => r.result?.outcome !== r.expected);
    const code = await app.stop();
    app = null;
    console.log(
      `\nclient: ${clientName}\n${results.length - failures.length} of ${results.length} messages settled as expected; app stopped (${code === 'SIGTERM' ? 'graceful SIGTERM shutdown' : `exit ${code}`}); ${Math.round((Date.now() - began) / 1000)} s in all`,
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
