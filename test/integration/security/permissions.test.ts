// A role that may consume the topic but not produce where the server writes (the dead-letter topic, or the topic
// itself for retry copies), on the client under test: the server starts and reports the refused producer as
// unhealthy, no message is acknowledged without its replacement, each message's refused write is logged once at
// error level (repeats at debug), and once the permission is granted through the admin API every message ends
// handled or dead-lettered as the contract says.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import {
  BabelPulsarClient,
  BabelQueueHealthIndicator,
  PulsarWebSocketClient,
  type BabelQueueModuleOptions,
} from '../../../lib/index.js';
import { onNative, uniqueTopic, waitFor } from '../../support/broker.js';
import { startWorkApp, Work, WORK } from './support/work.js';
import {
  OutputRecorder,
  readToken,
  securedBroker,
  securedUrl,
  trust,
  type SecuredBrokerState,
} from './support/secured.js';
import { adminRequest, ROLES } from '../../../scripts/lib/secured-broker.mjs';

jest.setTimeout(180_000);

let broker: SecuredBrokerState;

beforeAll(async () => {
  broker = await securedBroker();
}, 330_000);

const full = (topic: string) => `persistent://public/default/${topic}`;

/** Creates the topic (a grant needs it to exist), then grants `actions` on it to the limited role. */
async function grantTopic(topic: string, actions: string[]): Promise<void> {
  const created = await adminRequest(broker, 'PUT', `/admin/v2/persistent/public/default/${topic}`);
  if (![204, 409].includes(created.status)) throw new Error(`create ${topic}: HTTP ${created.status} ${created.body}`);
  const response = await adminRequest(
    broker,
    'POST',
    `/admin/v2/persistent/public/default/${topic}/permissions/${ROLES.limited}`,
    actions,
  );
  if (response.status !== 204) throw new Error(`grant on ${topic}: HTTP ${response.status} ${response.body}`);
}

/** The subscription's backlog on the secured broker (messages not acknowledged yet). */
async function backlogOf(topic: string, subscription = 'babelqueue'): Promise<number> {
  const response = await adminRequest(broker, 'GET', `/admin/v2/persistent/public/default/${topic}/stats`);
  if (response.status !== 200) throw new Error(`stats of ${topic}: HTTP ${response.status} ${response.body}`);
  const stats = JSON.parse(response.body) as { subscriptions: Record<string, { msgBacklog: number }> };
  return stats.subscriptions[subscription]?.msgBacklog ?? 0;
}

/** A WebSocket client of the app role (it may produce and consume everywhere), independent of the client under test. */
const appRole = () =>
  new PulsarWebSocketClient({
    serviceUrl: broker.webUrlTls,
    token: readToken(broker.tokens.app),
    tlsTrustCertsFilePath: broker.caFile,
  });

async function startLimited(topic: string, output: OutputRecorder, maxAttempts: number) {
  const options = {
    serviceUrl: securedUrl(broker),
    auth: { token: readToken(broker.tokens.limited) },
    clientOptions: trust(broker.caFile),
    topic,
    consumer: { maxAttempts, subscriptionInitialPosition: 'Earliest', nackRedeliverTimeoutMs: 500 },
    logger: output.logger,
  } as BabelQueueModuleOptions;
  return startWorkApp(options);
}

const errorLinesAbout = (output: OutputRecorder, text: string) =>
  output.lines.filter((line) => line.startsWith('error:') && line.includes(text));

describe(`a role that may consume but not produce where the server writes (${onNative() ? 'native' : 'WebSocket'})`, () => {
  it('no dead-letter permission: starts unhealthy, keeps the message, logs once per message, recovers on grant', async () => {
    const topic = uniqueTopic('no-dlq');
    const dlqTopic = full(`${topic}.dlq`);
    await grantTopic(topic, ['produce']); // retry copies are allowed, dead-letter records are not
    const watch = appRole();
    const dlq = await watch.subscribe({
      topic: `${topic}.dlq`,
      subscription: 'watch',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const output = new OutputRecorder();
    // The decision: start-up goes on (the consumer is allowed), the refusal is logged and health is down.
    const { app, settled } = await startLimited(topic, output, 2);
    try {
      expect(errorLinesAbout(output, `not authorized to produce to ${dlqTopic}`)).toHaveLength(1);
      const health = app.get(BabelQueueHealthIndicator);
      const down = health.isHealthy('pulsar');
      expect(down.pulsar.status).toBe('down');
      expect(down.pulsar.problems.join('\n')).toContain(
        `producer of dead-letter records for ${topic} is refused: not authorized to produce to ${dlqTopic}`,
      );
      expect(down.pulsar.consumers.topics[0]!.refused).toEqual([
        expect.objectContaining({ topic: dlqTopic, purpose: 'dead-letter records' }),
      ]);

      const publisher = app.get(BabelPulsarClient);
      await publisher.publish(WORK, { id: 'ok' });
      await publisher.publish(WORK, { id: 'bad-1', fail: true });
      await publisher.publish(WORK, { id: 'bad-2', fail: true });
      const work = app.get(Work);
      await waitFor('the good job', () => work.done.includes('ok'));
      // Attempt 1 is retried (a copy), attempt 2 should be dead-lettered: refused, so redelivered again and again.
      await waitFor(
        'refused dead-letter writes, redelivered',
        () => work.failures.filter((id) => id === 'bad-1').length >= 4,
        30_000,
      );
      const refused = settled.filter((event) => event.action === 'dead-letter');
      expect(refused.length).toBeGreaterThanOrEqual(4);
      expect(refused.every((event) => event.written === false)).toBe(true);
      expect(await backlogOf(topic)).toBeGreaterThanOrEqual(2); // both failing messages are kept
      // Once per message at error level, whatever the number of redeliveries; the repeats at debug level.
      const perMessage = errorLinesAbout(output, `could not write the dead-letter record to ${dlqTopic}`);
      expect(perMessage).toHaveLength(2);
      expect(perMessage[0]).toContain(`not authorized to produce to ${dlqTopic}`);
      expect(
        output.lines.filter((line) => line.startsWith('debug:') && line.includes(dlqTopic)).length,
      ).toBeGreaterThan(0);

      await grantTopic(`${topic}.dlq`, ['produce']);
      const records = [await dlq.receive(30_000), await dlq.receive(30_000)];
      for (const record of records) await dlq.acknowledge(record);
      const ids = records.map(
        (record) => (JSON.parse(record.getData().toString()) as { data: { id: string } }).data.id,
      );
      expect(ids.sort()).toEqual(['bad-1', 'bad-2']);
      await waitFor('the backlog drained', async () => (await backlogOf(topic)) === 0, 20_000);
      await expect(dlq.receive(2000)).rejects.toThrow(/TimeOut/); // each failing message dead-lettered once
      expect(settled.filter((event) => event.action === 'dead-letter' && event.written === true)).toHaveLength(2);
      expect(work.done).toEqual(['ok']);
      const up = health.isHealthy('pulsar');
      expect(up.pulsar.problems).toEqual([]);
      expect(up.pulsar.status).toBe('up');
      expect(output.lines.some((line) => line.includes(`producer for ${dlqTopic} created`))).toBe(true);
    } finally {
      await app.close();
      await watch.close();
    }
  });

  it('no permission to write retry copies: keeps the message until granted, then retries and dead-letters it', async () => {
    const topic = uniqueTopic('no-retry');
    await grantTopic(`${topic}.dlq`, ['produce']); // dead-letter records are allowed, retry copies are not
    const watch = appRole();
    const dlq = await watch.subscribe({
      topic: `${topic}.dlq`,
      subscription: 'watch',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const output = new OutputRecorder();
    const maxAttempts = 12;
    const { app, settled } = await startLimited(topic, output, maxAttempts);
    // The app's own publisher may not produce to the topic either: the app role publishes.
    const publisher = new BabelPulsarClient({ client: watch, topic });
    try {
      const health = app.get(BabelQueueHealthIndicator);
      expect(health.isHealthy('pulsar').pulsar.problems.join('\n')).toContain(
        `producer of retry copies for ${topic} is refused: not authorized to produce to ${full(topic)}`,
      );
      await publisher.publish(WORK, { id: 'ok' });
      await publisher.publish(WORK, { id: 'bad', fail: true });
      const work = app.get(Work);
      await waitFor('the good job', () => work.done.includes('ok'));
      await waitFor('refused retry copies', () => work.failures.length >= 3, 30_000);
      const refused = settled.filter((event) => event.action === 'retry');
      expect(refused.every((event) => event.written === false)).toBe(true);
      expect(await backlogOf(topic)).toBe(1);
      expect(errorLinesAbout(output, `could not write the retry copy to ${full(topic)}`)).toHaveLength(1);

      await grantTopic(topic, ['produce']);
      const record = await dlq.receive(60_000);
      await dlq.acknowledge(record);
      const body = JSON.parse(record.getData().toString()) as {
        data: { id: string };
        attempts: number;
        dead_letter: { reason: string };
      };
      expect(body.data.id).toBe('bad');
      expect(body.dead_letter.reason).toBe('failed');
      // Redeliveries count as attempts, so the handler ran exactly maxAttempts times in all.
      expect(work.failures).toHaveLength(maxAttempts);
      expect(settled.some((event) => event.action === 'retry' && event.written === true)).toBe(true);
      await waitFor('the backlog drained', async () => (await backlogOf(topic)) === 0, 20_000);
      expect(health.isHealthy('pulsar').pulsar.status).toBe('up');
    } finally {
      await app.close();
      await publisher.close();
      await watch.close();
    }
  });
});
