// Interop with the Java BabelQueue SDK (com.babelqueue:babelqueue-pulsar 1.0.0 on babelqueue-core 1.0.0,
// over org.apache.pulsar:pulsar-client 3.3.5), built from the vendored sources by
// scripts/interop/setup-java.mjs, through the real broker. Peer: test/interop/peers/java.
//
// The SDK's PulsarConsumer negatively acknowledges every failure and Pulsar redelivers it without a bound:
// the peer removes its subscription whenever it exits (count reached, timeout, or the suite's SIGTERM after
// each test), so no failing message keeps cycling on the broker.
import { randomUUID } from 'node:crypto';
import { EnvelopeCodec } from '../../lib/index.js';
import { pulsarProperties } from '../../lib/pulsar/index.js';
import { uniqueTopic, waitFor, webUrl } from '../support/broker.js';
import { peerProduce } from './support/peers.js';
import { DATA, defineInteropSuite, snapshot, type Seen } from './support/scenarios.js';

// The SDK's JSON parser: Long for integers (BigInteger beyond the long range), Double for any fraction.
const types = {
  text: 'String',
  int: 'Long',
  price: 'Long',
  negative: 'Long',
  zero: 'Long',
  maxSafe: 'Long',
  half: 'Double',
  quarter: 'Double',
  yes: 'Boolean',
  no: 'Boolean',
  nothing: 'null',
  nested: {
    list: ['Long', 'String', { three: 'Double' }, [], 'null'],
    empty: {},
    deeper: { a: { b: { c: 'String' } } },
  },
};

const URN_BODY = 'urn:babel:interop:routing.body-job';
const URN_PROP = 'urn:babel:interop:routing.property-job';
const URN_RETRY = 'urn:babel:interop:retry.checked';
const URN_DLQ = 'urn:babel:interop:dead-letter.checked';
const URN_NACK = 'urn:babel:interop:nack.forever';

async function subscriptionsOf(topic: string): Promise<string[]> {
  const response = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${topic}/subscriptions`);
  if (!response.ok) throw new Error(`subscriptions of ${topic}: HTTP ${response.status}`);
  return (await response.json()) as string[];
}

defineInteropSuite({
  sdk: 'java',
  name: 'Java',
  lang: 'java',
  dataTypes: types,
  // Unused: the SDK never dead-letters (see overrides).
  failureException: 'IllegalStateException',
  routedPublish: {
    unsupported:
      'the Java SDK has no API to publish with a bq-job other than the body job (PulsarPublisher projects it)',
  },
  // Replaced below by a scenario that asserts where the SDK does route.
  routesOnBqJob: 'the Java SDK routes on the body job only and never reads bq-job',
  delayedPublish: {},
  otel: {
    unsupported:
      'the Java SDK 1.0.0 (babelqueue-core, babelqueue-pulsar) has no OpenTelemetry support: no tracing module, no ' +
      'span, no traceparent (pulsar-client brings opentelemetry-api along, but the SDK never calls it)',
  },
  overrides: {
    'to-peer:routing': {
      title: 'bq-job ≠ body job → the SDK runs the body-job handler (it ignores bq-job)',
      differs:
        'The Java SDK routes on the body job (or its urn alias) only and never reads bq-job, although its README says ' +
        'it routes on bq-job: with bq-job ≠ body job, its body-job handler ran.',
      body: async (peer, kit) => {
        const topic = uniqueTopic('interop-java-route');
        const consumer = await kit.peerConsumer(peer, {
          topic,
          subscription: 'peer-java',
          handle: [URN_BODY, URN_PROP],
          count: 1,
          timeoutMs: 20_000,
        });
        const envelope = EnvelopeCodec.make(URN_BODY, { n: 1 }, { queue: topic });
        const producer = await kit.client.createProducer({ topic });
        try {
          await producer.send({
            data: EnvelopeCodec.encodeToBuffer(envelope),
            properties: { ...pulsarProperties(envelope), 'bq-job': URN_PROP },
          });
        } finally {
          await producer.close();
        }
        const [record, ...more] = await consumer.finished;
        expect(more).toEqual([]);
        expect(record!.properties['bq-job']).toBe(URN_PROP);
        expect(record!.handler).toBe(URN_BODY);
        expect(record!.routeUrn).toBe(URN_BODY);
        expect(record!.envelope.meta.id).toBe(envelope.meta.id);
        return `body job ${URN_BODY}, bq-job ${URN_PROP}, handlers registered for both: the java PulsarConsumer ran the ${URN_BODY} handler (EnvelopeCodec.urn of the body), the bq-job property played no part`;
      },
    },
    'from-peer:retry': {
      title: 'the SDK fails twice → it retries by redelivery on its own subscription; ours sees the message once',
      differs:
        'The Java SDK retries by negative acknowledgement: Pulsar redelivers to its own subscription only, and its ' +
        'handler sees attempts = max(body attempts, redelivery count) = 0, 1, 2 while bq-attempts stays "0". Nothing is ' +
        're-published, so a consumer on another subscription gets the message once, at attempts 0.',
      body: async (peer, kit) => {
        const topic = uniqueTopic('interop-java-retry');
        const seen: Seen[] = [];
        await kit.service(topic, URN_RETRY, (data, ctx) => void seen.push(snapshot(data, ctx)));
        const consumer = await kit.peerConsumer(peer, {
          topic,
          subscription: 'peer-java',
          handle: [URN_RETRY],
          fail: { [URN_RETRY]: 2 },
          count: 1,
        });
        const [produced] = await peerProduce(peer, topic, [{ urn: URN_RETRY, data: { n: 1 } }]);
        const records = await consumer.finished;
        expect(records.map((r) => [r.outcome, r.attempts, r.redeliveryCount])).toEqual([
          ['failed', 0, 0],
          ['failed', 1, 1],
          ['ok', 2, 2],
        ]);
        expect(records.map((r) => r.properties['bq-attempts'])).toEqual(['0', '0', '0']);
        expect(records.map((r) => JSON.parse(r.rawBody!).attempts)).toEqual([0, 0, 0]);
        await waitFor('our delivery', () => seen.length === 1);
        await new Promise((resolve) => setTimeout(resolve, 1500)); // any re-published copy would arrive by now
        expect(seen.map((s) => [s.attempts, s.envelope.meta.id, s.properties['bq-attempts']])).toEqual([
          [0, produced!.id, '0'],
        ]);
        return `the java handler failed twice: PulsarConsumer nacked, Pulsar redelivered to its subscription (redelivery count 0, 1, 2 → attempts 0, 1, 2; bq-attempts "0" and body attempts 0 every time); our handler on another subscription got the message once, getAttempts() 0`;
      },
    },
    'from-peer:dead-letter': {
      unsupported:
        'the Java SDK has no dead-lettering: a failing message is negatively acknowledged and redelivered forever ' +
        '(only a Pulsar DeadLetterPolicy on the ConsumerBuilder moves it, unchanged, with no dead_letter block). ' +
        'Our dead-letter record of a Java message is checked instead (extra test: the Java SDK accepts it).',
    },
  },
  extraTests: [
    {
      title: 'the SDK publishes → our server retries, then dead-letters → the SDK reads our copy and our record',
      body: async (peer, kit) => {
        const topic = uniqueTopic('interop-java-ours');
        const ours: Seen[] = [];
        await kit.service(
          topic,
          URN_DLQ,
          (data, ctx) => {
            ours.push(snapshot(data, ctx));
            throw new Error('card declined ☕');
          },
          { maxAttempts: 2 },
        );
        const onTopic = await kit.peerConsumer(peer, {
          topic,
          subscription: 'peer-java',
          handle: [URN_DLQ],
          count: 2,
        });
        const onDlq = await kit.peerConsumer(peer, {
          topic: `${topic}.dlq`,
          subscription: 'peer-java',
          handle: [URN_DLQ],
          count: 1,
        });
        const traceId = randomUUID();
        const [produced] = await peerProduce(peer, topic, [{ urn: URN_DLQ, data: DATA, traceId }]);
        const [copies, [record]] = await Promise.all([onTopic.finished, onDlq.finished]);
        expect(ours.map((s) => s.attempts).sort()).toEqual([0, 1]);
        const [original, copy] = [...copies].sort((a, b) => a.attempts - b.attempts);
        expect([original!.attempts, copy!.attempts]).toEqual([0, 1]);
        expect(copy!.properties['bq-attempts']).toBe('1');
        expect(copy!.envelope.meta).toEqual(original!.envelope.meta);
        expect(copy!.envelope.data).toEqual(DATA);
        expect(record!.accepted).toBe(true);
        expect(record!.envelope).toEqual({
          job: URN_DLQ,
          trace_id: traceId,
          data: DATA,
          meta: { id: produced!.id, queue: topic, lang: 'java', schema_version: 1, created_at: expect.any(Number) },
          attempts: 2,
          dead_letter: {
            reason: 'failed',
            error: 'card declined ☕',
            exception: 'Error',
            failed_at: expect.any(Number),
            original_queue: topic,
            attempts: 2,
            lang: 'node',
          },
        });
      },
    },
    {
      title: 'a message the SDK fails forever is not left cycling: the peer removes its subscription when it exits',
      body: async (peer, kit) => {
        const topic = uniqueTopic('interop-java-nack');
        const consumer = await kit.peerConsumer(peer, {
          topic,
          subscription: 'peer-java',
          handle: [URN_NACK],
          fail: { [URN_NACK]: 1_000_000 },
          calls: 3,
        });
        expect(await subscriptionsOf(topic)).toContain('peer-java');
        await peerProduce(peer, topic, [{ urn: URN_NACK, data: { n: 1 } }]);
        const records = await consumer.finished;
        expect(records.map((r) => [r.outcome, r.redeliveryCount])).toEqual([
          ['failed', 0],
          ['failed', 1],
          ['failed', 2],
        ]);
        expect(await subscriptionsOf(topic)).not.toContain('peer-java');
      },
    },
  ],
});
