// Against a real secured broker (token authentication, authorization, TLS), on the client under test:
// the right token over TLS publishes, consumes, retries and dead-letters; a missing, wrong or expired token and an
// untrusted certificate fail start-up fast with an error that names the URL and what was refused; and no secret
// reaches any output the suite can see.
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
  secretsOf,
  securedBroker,
  securedUrl,
  trust,
  type SecuredBrokerState,
} from './support/secured.js';

jest.setTimeout(120_000);

let broker: SecuredBrokerState;
const output = new OutputRecorder();

beforeAll(async () => {
  broker = await securedBroker();
  output.captureProcessOutput();
}, 330_000);

afterAll(() => {
  output.stopCapture();
});

/** A WebSocket observer on the secured broker (app role over wss://), independent of the client under test. */
const observer = () =>
  new PulsarWebSocketClient({
    serviceUrl: broker.webUrlTls,
    token: readToken(broker.tokens.app),
    tlsTrustCertsFilePath: broker.caFile,
  });

function moduleOptions(overrides: Partial<BabelQueueModuleOptions>): BabelQueueModuleOptions {
  return {
    serviceUrl: securedUrl(broker),
    auth: { token: readToken(broker.tokens.app) },
    clientOptions: trust(broker.caFile),
    topic: uniqueTopic('secured'),
    consumer: { maxAttempts: 2, subscriptionInitialPosition: 'Earliest' },
    logger: output.logger,
    hooks: {
      onError: (error) => output.record('onError', [error]),
      onDeadLetter: (record) => output.record('onDeadLetter', [record]),
    },
    ...overrides,
  } as BabelQueueModuleOptions;
}

async function start(options: BabelQueueModuleOptions) {
  return startWorkApp(options);
}

describe(`secured broker over TLS (${onNative() ? 'native pulsar+ssl://' : 'WebSocket https://'})`, () => {
  it('with the right token: publishes, consumes, retries and dead-letters', async () => {
    const options = moduleOptions({});
    const topic = options.topic!;
    const watch = observer();
    const dlq = await watch.subscribe({
      topic: `${topic}.dlq`,
      subscription: 'watch',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const { app, settled } = await start(options);
    try {
      const publisher = app.get(BabelPulsarClient);
      await publisher.publish(WORK, { id: 'ok' });
      await publisher.publish(WORK, { id: 'bad', fail: true });
      const work = app.get(Work);
      await waitFor('the good job', () => work.done.includes('ok'));
      await waitFor('two attempts of the failing job', () => work.failures.length === 2);
      const record = await dlq.receive(20_000);
      await dlq.acknowledge(record);
      const body = JSON.parse(record.getData().toString()) as { data: { id: string }; dead_letter: { reason: string } };
      expect(body.data.id).toBe('bad');
      expect(body.dead_letter.reason).toBe('failed');
      output.record('dead-letter record', [record.getData().toString(), record.getProperties()]);
      await waitFor('three settlements', () => settled.length >= 3);
      expect(settled.map((event) => event.action).sort()).toEqual(['ack', 'dead-letter', 'retry']);
      output.record('settled', [settled]);
      const health = app.get(BabelQueueHealthIndicator);
      const status = health.isHealthy('pulsar');
      expect(status.pulsar.status).toBe('up');
      output.record('health', [status, health.check()]);
    } finally {
      await app.close();
      await watch.close();
    }
  });

  // libpulsar reports a refused token only as a timeout of the operation; the adapter says what that can mean.
  const tokenRefused = onNative() ? /TimeOut.*missing, wrong or expired token/ : /HTTP 401/;
  const refusals: Array<[string, () => Partial<BabelQueueModuleOptions>, RegExp]> = [
    ['no token', () => ({ auth: undefined }), tokenRefused],
    ['a token signed with another key', () => ({ auth: { token: readToken(broker.tokens.forged) } }), tokenRefused],
    ['an expired token', () => ({ auth: { token: readToken(broker.tokens.expired) } }), tokenRefused],
    [
      'a certificate from a CA it does not trust',
      () => ({ clientOptions: trust(broker.otherCaFile) }),
      /certificate|TLS|SSL|handshake/i,
    ],
  ];

  it.each(refusals)(
    'with %s: start-up fails within 15 s, naming the URL and what was refused',
    async (_case, change, refused) => {
      const options = moduleOptions(change());
      const started = Date.now();
      let failure: unknown;
      try {
        const { app } = await start(options);
        await app.close();
      } catch (error) {
        failure = error;
      }
      const elapsed = Date.now() - started;
      expect(failure).toBeInstanceOf(Error);
      const message = (failure as Error).message;
      output.record('start-up failure', [failure]);
      expect(elapsed).toBeLessThan(15_000);
      expect(message).toContain(securedUrl(broker).replace(/^https/, 'wss'));
      expect(message).toMatch(refused);
      expect(message).not.toMatch(/\n\s+at /); // the message, not a stack of internals
    },
  );

  it('no token, key or secret appears in any captured output', () => {
    const secrets = secretsOf(broker);
    expect(secrets.length).toBeGreaterThan(10);
    expect(output.lines.length).toBeGreaterThan(5);
    expect(output.leaks(secrets)).toEqual([]);
  });
});
