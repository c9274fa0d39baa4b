// The interop scenarios, run once per peer SDK: this library (BabelPulsarClient + a Nest microservice
// with BabelPulsarServer, over the WebSocket client) and the peer (the SDK's own Pulsar transport over
// the binary protocol) exchange messages through the real broker, in both directions.
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { context, SpanKind, trace, type SpanContext } from '@opentelemetry/api';
import { createHash, randomUUID } from 'node:crypto';
import {
  BabelContext,
  BabelHandler,
  EnvelopeCodec,
  type BabelPulsarServerOptions,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { BabelPulsarClient } from '../../../lib/nest/client/babel-pulsar.client.js';
import { otelTraceIdOf, parentSpanIdOf, uuidOfOtelTraceId } from '../../../lib/otel/trace-id.js';
import { newClient, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';
import { withTracing } from './otel.js';
import {
  peerProduce,
  peerProduceTraced,
  setupPeer,
  startPeerConsumer,
  type PeerInfo,
  type PeerSdk,
  type RunningPeerConsumer,
} from './peers.js';
import { flushResults, notRun, proof, recordSdk, type Direction, type FeatureId } from './results.js';

/** What differs between the peer SDKs. */
export interface PeerProfile {
  sdk: PeerSdk;
  /** Human name used in test titles and the table. */
  name: string;
  /** `meta.lang` (and `bq-source-lang`) the SDK writes. */
  lang: string;
  /** The language types the SDK decodes DATA's values into. */
  dataTypes: unknown;
  /** Error type name the SDK writes into dead_letter.exception for the peer's planned failure. */
  failureException: string;
  /** How the peer publishes with bq-job differing from the body job: a caveat for the table, or a reason it cannot. */
  routedPublish: { note?: string } | { unsupported: string };
  /**
   * Does the SDK's consumer route on bq-job? A string says why not: the scenario then shows which handler the
   * SDK does run and records the cell as not applicable with that reason.
   */
  routesOnBqJob: true | string;
  /** How the peer publishes with a delay: a caveat for the table, or a reason it cannot. */
  delayedPublish: { note?: string } | { unsupported: string };
  /**
   * The SDK's OpenTelemetry support (publish and handler wrapper), which the peer runs with --otel: a caveat for
   * the table, or why the SDK has none (the tracing scenarios are then recorded as not run).
   */
  otel: { note?: string } | { unsupported: string };
  /** Shared scenarios this SDK replaces, keyed `<direction>:<first feature>`. */
  overrides?: Partial<Record<`${Direction}:${FeatureId}`, ScenarioOverride>>;
  /** SDK-specific tests beyond the matrix (run, not recorded in it). */
  extraTests?: Array<{ title: string; body: (peer: PeerInfo, kit: SuiteKit) => Promise<void> }>;
}

/** The suite's helpers, for a profile's own scenario bodies; everything they start is closed after each test. */
export interface SuiteKit {
  publisher: BabelPulsarClient;
  /** The test client (BQ_TEST_CLIENT), for raw producers. */
  client: PulsarClientLike;
  service(
    topic: string,
    urn: string,
    onCall: (data: Record<string, unknown>, ctx: BabelContext) => unknown,
    options?: Partial<BabelPulsarServerOptions>,
  ): Promise<RunningService>;
  peerConsumer(peer: PeerInfo, options: Parameters<typeof startPeerConsumer>[1]): Promise<RunningPeerConsumer>;
}

/**
 * A shared scenario replaced for one SDK: by a reason it cannot apply (recorded as not run), or by a body
 * that asserts how the SDK behaves instead (recorded as 'differs', `differs` being the table's note).
 */
export type ScenarioOverride =
  | { unsupported: string }
  | { title: string; differs: string; body: (peer: PeerInfo, kit: SuiteKit) => Promise<string> };

/** Non-ASCII text, integers, an exact float, booleans, null, nested objects and arrays. */
export const DATA = {
  text: 'Café — naïve ☕ 日本語 😀 <a & b>/"q"\\',
  int: 7,
  price: 1299,
  negative: -42,
  zero: 0,
  maxSafe: 9007199254740991,
  half: 0.5,
  quarter: -0.25,
  yes: true,
  no: false,
  nothing: null,
  nested: { list: [1, 'two', { three: 3.25 }, [], null], empty: {}, deeper: { a: { b: { c: 'ç' } } } },
};

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DELAY_MS = 3000;

/** What our @BabelHandler saw for one delivery. */
export interface Seen {
  data: Record<string, unknown>;
  envelope: Record<string, any>;
  attempts: number;
  urn: string;
  traceId: string;
  properties: Record<string, string>;
  payload: string;
  topic: string;
  at: number;
}

export function snapshot(data: Record<string, unknown>, ctx: BabelContext): Seen {
  return {
    data,
    envelope: structuredClone(ctx.getEnvelope()) as Record<string, any>,
    attempts: ctx.getAttempts(),
    urn: ctx.getUrn(),
    traceId: ctx.getTraceId(),
    properties: { ...ctx.getProperties() },
    payload: ctx.getMessage().getData().toString('utf8'),
    topic: ctx.getTopic(),
    at: Date.now(),
  };
}

/** A controller with one @BabelHandler for `urn`; `onCall` may throw to fail the delivery. */
function controllerFor(urn: string, onCall: (data: Record<string, unknown>, ctx: BabelContext) => unknown) {
  @Controller()
  class InteropController {
    @BabelHandler(urn)
    handle(@Payload() data: Record<string, unknown>, @Ctx() ctx: BabelContext) {
      return onCall(data, ctx);
    }
  }
  return InteropController;
}

const bqProperties = (properties: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(properties)
      .filter(([key]) => key.startsWith('bq-'))
      .sort(([a], [b]) => a.localeCompare(b)),
  );

/** "text: str, int: int, half: float, …" for the table. */
const typeSummary = (types: any) =>
  ['text', 'int', 'maxSafe', 'half', 'yes', 'nothing'].map((key) => `${key} ${types?.[key]}`).join(', ') +
  ', nested objects/arrays kept';

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

export function defineInteropSuite(profile: PeerProfile): void {
  const { sdk, name } = profile;
  const label = (direction: Direction) => (direction === 'to-peer' ? `node → ${sdk}` : `${sdk} → node`);

  describe(`interop with the ${name} SDK (real broker)`, () => {
    const setup = setupPeer(sdk);

    type Body = (peer: PeerInfo) => Promise<string>;
    const cases: Array<{
      direction: Direction;
      features: FeatureId[];
      title: string;
      body: Body;
      note?: string;
      unsupported?: string;
      notApplicable?: string;
    }> = [];
    const scenario = (
      direction: Direction,
      features: FeatureId | FeatureId[],
      title: string,
      body: Body,
      extra: { note?: string; unsupported?: string; notApplicable?: string } = {},
    ) =>
      cases.push({
        direction,
        features: ([] as FeatureId[]).concat(features),
        title: `${label(direction)}: ${title}`,
        body,
        ...extra,
      });

    let ws: PulsarClientLike;
    let publisher: BabelPulsarClient;
    const services: RunningService[] = [];
    const peers: RunningPeerConsumer[] = [];

    const service = async (
      topic: string,
      urn: string,
      onCall: (data: Record<string, unknown>, ctx: BabelContext) => unknown,
      options: Partial<BabelPulsarServerOptions> = {},
    ) => {
      const running = await startService([controllerFor(urn, onCall)], { client: ws, topics: topic, ...options });
      services.push(running);
      return running;
    };
    const peerConsumer = async (peer: PeerInfo, options: Parameters<typeof startPeerConsumer>[1]) => {
      const running = await startPeerConsumer(peer, options);
      peers.push(running);
      return running;
    };
    const kit: SuiteKit = {
      get publisher() {
        return publisher;
      },
      get client() {
        return ws;
      },
      service,
      peerConsumer,
    };

    // ---------------------------------------------------------------- envelope + properties

    const URN_ENV = 'urn:babel:interop:envelope.checked';
    scenario(
      'to-peer',
      ['envelope', 'properties'],
      'BabelPulsarClient.publish → the SDK worker handles it with every field exact',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-env`);
        const consumer = await peerConsumer(peer, { topic, subscription: `peer-${sdk}`, handle: [URN_ENV], count: 1 });
        const traceId = randomUUID();
        const id = await publisher.publish(URN_ENV, DATA, { topic, traceId });
        const [record, ...more] = await consumer.finished;
        expect(more).toEqual([]);
        expect(record!.handler).toBe(URN_ENV);
        expect(record!.outcome).toBe('ok');
        expect(record!.accepted).toBe(true);
        expect(record!.envelope).toEqual({
          job: URN_ENV,
          trace_id: traceId,
          data: DATA,
          meta: { id, queue: topic, lang: 'node', schema_version: 1, created_at: expect.any(Number) },
          attempts: 0,
        });
        expect(record!.attempts).toBe(0);
        expect(record!.dataTypes).toEqual(profile.dataTypes);
        expect(bqProperties(record!.properties)).toEqual({
          'bq-attempts': '0',
          'bq-job': URN_ENV,
          'bq-message-id': id,
          'bq-schema-version': '1',
          'bq-source-lang': 'node',
          'bq-trace-id': traceId,
        });
        expect(JSON.parse(record!.rawBody!)).toEqual(record!.envelope);
        return (
          `${peer.sdk} ${record!.sdkVersion} handler for ${URN_ENV} received job, trace_id, meta.id, meta.queue, meta.lang "node", ` +
          `schema_version 1, attempts 0 and data exactly (decoded as ${typeSummary(record!.dataTypes)}); ` +
          `it saw the six bq-* properties with bq-source-lang "node" and bq-attempts "0"`
        );
      },
    );

    scenario(
      'from-peer',
      ['envelope', 'properties'],
      'the SDK publishes → our @BabelHandler gets every field exact, bq-* in BabelContext',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-env`);
        const seen: Seen[] = [];
        const running = await service(topic, URN_ENV, (data, ctx) => void seen.push(snapshot(data, ctx)));
        const traceId = randomUUID();
        const [produced] = await peerProduce(peer, topic, [{ urn: URN_ENV, data: DATA, traceId }]);
        await waitFor('our handler', () => seen.length === 1 && running.settled.length === 1);
        const [s] = seen;
        expect(s!.urn).toBe(URN_ENV);
        expect(s!.data).toEqual(DATA);
        expect(s!.envelope).toEqual({
          job: URN_ENV,
          trace_id: traceId,
          data: DATA,
          meta: {
            id: produced!.id,
            queue: topic,
            lang: profile.lang,
            schema_version: 1,
            created_at: expect.any(Number),
          },
          attempts: 0,
        });
        expect(s!.attempts).toBe(0);
        expect(s!.traceId).toBe(traceId);
        expect(bqProperties(s!.properties)).toEqual({
          'bq-attempts': '0',
          'bq-job': URN_ENV,
          'bq-message-id': produced!.id,
          'bq-schema-version': '1',
          'bq-source-lang': profile.lang,
          'bq-trace-id': traceId,
        });
        expect(running.settled[0]).toMatchObject({ action: 'ack', urn: URN_ENV });
        expect(EnvelopeCodec.accepts(JSON.parse(s!.payload))).toBe(true);
        const literal = s!.payload.includes(DATA.text.slice(0, 14));
        return (
          `${peer.sdk} ${produced!.how} → our handler: job, trace_id, meta.id, meta.queue, meta.lang "${profile.lang}", attempts 0 and data ` +
          `exact; BabelContext.getProperties() shows the six bq-* properties (bq-source-lang "${profile.lang}"); acknowledged once. ` +
          `Non-ASCII text on the wire: ${literal ? 'literal UTF-8' : 'escaped'}`
        );
      },
    );

    // ---------------------------------------------------------------- routing on bq-job

    const URN_BODY = 'urn:babel:interop:routing.body-job';
    const URN_PROP = 'urn:babel:interop:routing.property-job';
    scenario(
      'to-peer',
      'routing',
      typeof profile.routesOnBqJob === 'string'
        ? 'a message whose bq-job differs from its body job: the SDK routes it (on the body job)'
        : 'a message whose bq-job differs from its body job reaches the bq-job handler',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-route`);
        const bodyRouting = typeof profile.routesOnBqJob === 'string';
        const consumer = await peerConsumer(peer, {
          topic,
          subscription: `peer-${sdk}`,
          // An SDK that routes on the body job gets a handler for it too, so the test shows where it went.
          handle: bodyRouting ? [URN_PROP, URN_BODY] : [URN_PROP],
          count: 1,
          maxAttempts: 1,
          timeoutMs: 20_000,
        });
        // BabelPulsarClient always writes bq-job = job; the mismatch is built from the same codec and projection.
        const envelope = EnvelopeCodec.make(URN_BODY, { n: 1 }, { queue: topic });
        const producer = await ws.createProducer({ topic });
        try {
          await producer.send({
            data: EnvelopeCodec.encodeToBuffer(envelope),
            properties: { ...pulsarProperties(envelope), 'bq-job': URN_PROP },
          });
        } finally {
          await producer.close();
        }
        const [record] = await consumer.finished;
        expect(record!.envelope.job).toBe(URN_BODY);
        expect(record!.envelope.meta.id).toBe(envelope.meta.id);
        expect(record!.properties['bq-job']).toBe(URN_PROP);
        if (bodyRouting) {
          expect(record!.handler).toBe(URN_BODY);
          return `body job ${URN_BODY}, bq-job ${URN_PROP} (our codec + pulsarProperties, bq-job overridden), the ${peer.sdk} worker with handlers for both: it ran the ${URN_BODY} handler (the body job); bq-job was visible on the message but not used`;
        }
        expect(record!.handler).toBe(URN_PROP);
        return `body job ${URN_BODY}, bq-job ${URN_PROP} (our codec + pulsarProperties, bq-job overridden): the ${peer.sdk} worker ran the ${URN_PROP} handler; the handler got the body unchanged`;
      },
      typeof profile.routesOnBqJob === 'string' ? { notApplicable: profile.routesOnBqJob } : {},
    );

    scenario(
      'from-peer',
      'routing',
      'the SDK publishes with bq-job ≠ body job → our server routes on bq-job and reports the mismatch',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-route`);
        const seen: Seen[] = [];
        const mismatches: Array<[string, string]> = [];
        await service(topic, URN_PROP, (data, ctx) => void seen.push(snapshot(data, ctx)), {
          onRoutingMismatch: (propertyUrn, bodyUrn) => void mismatches.push([propertyUrn, bodyUrn]),
        });
        const [produced] = await peerProduce(peer, topic, [{ urn: URN_BODY, data: { n: 1 }, routeUrn: URN_PROP }]);
        await waitFor('our handler', () => seen.length === 1);
        expect(seen[0]!.urn).toBe(URN_PROP);
        expect(seen[0]!.envelope.job).toBe(URN_BODY);
        expect(seen[0]!.properties['bq-job']).toBe(URN_PROP);
        expect(seen[0]!.envelope.meta.id).toBe(produced!.id);
        expect(mismatches).toEqual([[URN_PROP, URN_BODY]]);
        return `${peer.sdk} ${produced!.how} (bq-job ${URN_PROP}, body job ${URN_BODY}) → our ${URN_PROP} handler ran (BabelContext.getUrn() = bq-job), envelope.job kept the body's; onRoutingMismatch called once`;
      },
      'unsupported' in profile.routedPublish
        ? { unsupported: profile.routedPublish.unsupported }
        : { ...(profile.routedPublish.note && { note: profile.routedPublish.note }) },
    );

    // ---------------------------------------------------------------- delayed delivery

    const URN_DELAY = 'urn:babel:interop:delay.checked';
    scenario(
      'to-peer',
      'delay',
      `publish({ delay: ${DELAY_MS} }) → the SDK worker gets it no earlier than ${DELAY_MS} ms later`,
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-delay`);
        const consumer = await peerConsumer(peer, {
          topic,
          subscription: `peer-${sdk}`,
          handle: [URN_DELAY],
          count: 2,
          timeoutMs: 30_000,
        });
        const t0 = Date.now();
        const delayedId = await publisher.publish(URN_DELAY, { which: 'delayed' }, { topic, delay: DELAY_MS });
        const nowId = await publisher.publish(URN_DELAY, { which: 'now' }, { topic });
        const records = await consumer.finished;
        const delayed = records.find((r) => r.envelope.meta.id === delayedId)!;
        const now = records.find((r) => r.envelope.meta.id === nowId)!;
        expect(delayed.properties['bq-delay']).toBe(String(DELAY_MS));
        expect(now.properties['bq-delay']).toBeUndefined();
        expect(now.receivedAt).toBeLessThan(delayed.receivedAt);
        expect(delayed.receivedAt - t0).toBeGreaterThanOrEqual(DELAY_MS);
        expect(delayed.receivedAt - t0).toBeLessThan(DELAY_MS + 5000);
        expect(delayed.attempts).toBe(0);
        return `delay ${DELAY_MS} ms (deliverAt + bq-delay "${DELAY_MS}"): the ${peer.sdk} worker got it after ${delayed.receivedAt - t0} ms, the undelayed one sent after it arrived after ${now.receivedAt - t0} ms`;
      },
    );

    scenario(
      'from-peer',
      'delay',
      `the peer publishes with a ${DELAY_MS} ms delay → our handler gets it no earlier than ${DELAY_MS} ms later`,
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-delay`);
        const seen: Seen[] = [];
        await service(topic, URN_DELAY, (data, ctx) => void seen.push(snapshot(data, ctx)));
        const produced = await peerProduce(peer, topic, [
          { urn: URN_DELAY, data: { which: 'delayed' }, delayMs: DELAY_MS },
          { urn: URN_DELAY, data: { which: 'now' } },
        ]);
        await waitFor('both messages', () => seen.length === 2, 20_000);
        const delayed = seen.find((s) => s.data.which === 'delayed')!;
        const now = seen.find((s) => s.data.which === 'now')!;
        const sentAt = produced[0]!.sentAt;
        expect(delayed.envelope.meta.id).toBe(produced[0]!.id);
        expect(delayed.properties['bq-delay']).toBe(String(DELAY_MS));
        expect(now.at).toBeLessThan(delayed.at);
        expect(delayed.at - sentAt).toBeGreaterThanOrEqual(DELAY_MS);
        expect(delayed.at - sentAt).toBeLessThan(DELAY_MS + 5000);
        return `${peer.sdk} ${produced[0]!.how} (${DELAY_MS} ms, bq-delay "${delayed.properties['bq-delay']}") → our handler after ${delayed.at - sentAt} ms; the undelayed one published after it arrived after ${now.at - produced[1]!.sentAt} ms`;
      },
      'unsupported' in profile.delayedPublish
        ? { unsupported: profile.delayedPublish.unsupported }
        : { note: profile.delayedPublish.note },
    );

    // ---------------------------------------------------------------- retries across SDKs

    const URN_RETRY = 'urn:babel:interop:retry.checked';
    scenario(
      'to-peer',
      'retry',
      'our server retries twice (re-publish) → the SDK, on another subscription, sees attempts 0, 1, 2',
      async (peer) => {
        // Both sides subscribe to the same topic: our server ("babelqueue") fails the first two deliveries and
        // re-publishes each retry copy to the topic; the peer's own subscription receives the original and both copies.
        const topic = uniqueTopic(`interop-${sdk}-retry`);
        const ours: number[] = [];
        await service(
          topic,
          URN_RETRY,
          (_data, ctx) => {
            ours.push(ctx.getAttempts());
            if (ctx.getAttempts() < 2) throw new Error(`planned failure at attempts ${ctx.getAttempts()}`);
          },
          { maxAttempts: 5 },
        );
        const consumer = await peerConsumer(peer, {
          topic,
          subscription: `peer-${sdk}`,
          handle: [URN_RETRY],
          count: 3,
        });
        const id = await publisher.publish(URN_RETRY, { n: 1 }, { topic });
        const records = await consumer.finished;
        await waitFor('our third delivery', () => ours.length === 3);
        expect(sorted(ours)).toEqual([0, 1, 2]);
        expect(records.map((r) => r.envelope.meta.id)).toEqual([id, id, id]);
        const byAttempts = [...records].sort((a, b) => a.attempts - b.attempts);
        expect(byAttempts.map((r) => r.attempts)).toEqual([0, 1, 2]);
        expect(byAttempts.map((r) => r.properties['bq-attempts'])).toEqual(['0', '1', '2']);
        expect(byAttempts.map((r) => JSON.parse(r.rawBody!).attempts)).toEqual([0, 1, 2]);
        expect(byAttempts.every((r) => r.envelope.meta.lang === 'node' && r.redeliveryCount === 0)).toBe(true);
        return `our handler failed at attempts 0 and 1 (maxAttempts 5); the ${peer.sdk} SDK reported attempts 0, 1, 2 for the original and our two retry copies (bq-attempts and body attempts 0/1/2, same meta.id, redelivery count 0)`;
      },
    );

    scenario(
      'from-peer',
      'retry',
      'the SDK retries twice → our handler, on another subscription, sees getAttempts() 0, 1, 2',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-retry`);
        const seen: Seen[] = [];
        await service(topic, URN_RETRY, (data, ctx) => void seen.push(snapshot(data, ctx)));
        const consumer = await peerConsumer(peer, {
          topic,
          subscription: `peer-${sdk}`,
          handle: [URN_RETRY],
          fail: { [URN_RETRY]: 2 },
          maxAttempts: 5,
          count: 1,
        });
        const [produced] = await peerProduce(peer, topic, [{ urn: URN_RETRY, data: { n: 1 } }]);
        const peerRecords = await consumer.finished;
        await waitFor('three deliveries to our handler', () => seen.length === 3);
        expect(peerRecords.map((r) => [r.outcome, r.attempts])).toEqual([
          ['failed', 0],
          ['failed', 1],
          ['ok', 2],
        ]);
        const byAttempts = [...seen].sort((a, b) => a.attempts - b.attempts);
        expect(byAttempts.map((s) => s.attempts)).toEqual([0, 1, 2]);
        expect(byAttempts.map((s) => s.envelope.meta.id)).toEqual([produced!.id, produced!.id, produced!.id]);
        expect(byAttempts.map((s) => s.properties['bq-attempts'])).toEqual(['0', '1', '2']);
        expect(byAttempts.map((s) => JSON.parse(s.payload).attempts)).toEqual([0, 1, 2]);
        expect(byAttempts.every((s) => s.envelope.meta.lang === profile.lang)).toBe(true);
        return `the ${peer.sdk} worker failed twice (max_attempts 5) and re-published retry copies; our handler saw getAttempts() 0, 1, 2 (bq-attempts "0"/"1"/"2", body attempts 0/1/2, same meta.id, meta.lang "${profile.lang}")`;
      },
    );

    // ---------------------------------------------------------------- dead letters

    const URN_DLQ = 'urn:babel:interop:dead-letter.checked';
    scenario(
      'to-peer',
      'dead-letter',
      'our server dead-letters after maxAttempts → the SDK reads <topic>.dlq and accepts the record',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-dlq`);
        const consumer = await peerConsumer(peer, {
          topic: `${topic}.dlq`,
          subscription: `peer-${sdk}`,
          handle: [URN_DLQ],
          count: 1,
        });
        await service(
          topic,
          URN_DLQ,
          () => {
            throw new Error('card declined ☕');
          },
          { maxAttempts: 2 },
        );
        const traceId = randomUUID();
        const id = await publisher.publish(URN_DLQ, DATA, { topic, traceId });
        const [record] = await consumer.finished;
        expect(record!.accepted).toBe(true);
        expect(record!.handler).toBe(URN_DLQ);
        expect(record!.envelope).toEqual({
          job: URN_DLQ,
          trace_id: traceId,
          data: DATA,
          meta: { id, queue: topic, lang: 'node', schema_version: 1, created_at: expect.any(Number) },
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
        expect(record!.attempts).toBe(2);
        expect(record!.properties).toMatchObject({
          'bq-job': URN_DLQ,
          'bq-attempts': '2',
          'bq-dead-letter-reason': 'failed',
        });
        return `our record on <topic>.dlq (maxAttempts 2) → the ${peer.sdk} codec accepts it; its handler got job, trace_id, data, meta unchanged, attempts 2 and dead_letter {reason failed, error, exception "Error", failed_at, original_queue, attempts 2, lang "node"} intact`;
      },
    );

    scenario(
      'from-peer',
      'dead-letter',
      'the SDK dead-letters after max_attempts → our server reads <topic>.dlq and handles the record',
      async (peer) => {
        const topic = uniqueTopic(`interop-${sdk}-dlq`);
        const seen: Seen[] = [];
        await service(`${topic}.dlq`, URN_DLQ, (data, ctx) => void seen.push(snapshot(data, ctx)));
        const consumer = await peerConsumer(peer, {
          topic,
          subscription: `peer-${sdk}`,
          handle: [URN_DLQ],
          fail: { [URN_DLQ]: 99 },
          maxAttempts: 2,
          deadLetter: true,
          calls: 2,
        });
        const traceId = randomUUID();
        const [produced] = await peerProduce(peer, topic, [{ urn: URN_DLQ, data: DATA, traceId }]);
        await consumer.finished;
        await waitFor('the dead-letter record in our handler', () => seen.length === 1);
        const [s] = seen;
        expect(s!.urn).toBe(URN_DLQ);
        expect(s!.attempts).toBe(2);
        expect(s!.envelope).toEqual({
          job: URN_DLQ,
          trace_id: traceId,
          data: DATA,
          meta: {
            id: produced!.id,
            queue: topic,
            lang: profile.lang,
            schema_version: 1,
            created_at: expect.any(Number),
          },
          attempts: 2,
          dead_letter: {
            reason: 'failed',
            error: expect.stringContaining('planned failure'),
            exception: profile.failureException,
            failed_at: expect.any(Number),
            original_queue: topic,
            attempts: 2,
            lang: profile.lang,
          },
        });
        expect(EnvelopeCodec.accepts(JSON.parse(s!.payload))).toBe(true);
        return `${peer.sdk} dead-lettered to <topic>.dlq after 2 failed deliveries; our server consumed it (routed on bq-job ${s!.properties['bq-job']}, getAttempts() 2, bq-attempts "${s!.properties['bq-attempts']}"), our codec accepts it and the dead_letter block {reason failed, exception "${profile.failureException}", original_queue, attempts 2, lang "${profile.lang}"} arrived intact`;
      },
    );

    // ---------------------------------------------------------------- trace continuation

    const URN_HOP1 = 'urn:babel:interop:trace.first-hop';
    const URN_HOP2 = 'urn:babel:interop:trace.second-hop';
    scenario(
      'from-peer',
      'trace',
      'the SDK starts a trace → our handler publishes onward with getTraceId() → the SDK: one trace_id',
      async (peer) => {
        const first = uniqueTopic(`interop-${sdk}-trace-a`);
        const second = uniqueTopic(`interop-${sdk}-trace-b`);
        const seen: Seen[] = [];
        const onward: string[] = [];
        await service(first, URN_HOP1, async (data, ctx) => {
          seen.push(snapshot(data, ctx));
          onward.push(
            await publisher.publish(URN_HOP2, { ...data, hop: 2 }, { topic: second, traceId: ctx.getTraceId() }),
          );
        });
        const consumer = await peerConsumer(peer, {
          topic: second,
          subscription: `peer-${sdk}`,
          handle: [URN_HOP2],
          count: 1,
        });
        const [produced] = await peerProduce(peer, first, [{ urn: URN_HOP1, data: { hop: 1 } }]);
        const [record] = await consumer.finished;
        const traceId = seen[0]!.traceId;
        expect(traceId).toMatch(UUID_V4);
        expect(seen[0]!.properties['bq-trace-id']).toBe(traceId);
        expect(seen[0]!.envelope.meta.id).toBe(produced!.id);
        expect(record!.envelope.trace_id).toBe(traceId);
        expect(record!.properties['bq-trace-id']).toBe(traceId);
        expect(record!.envelope.meta.id).toBe(onward[0]);
        expect(new Set([produced!.id, onward[0]]).size).toBe(2);
        expect(record!.envelope.data).toEqual({ hop: 2 });
        return `${peer.sdk} minted the trace id (UUID v4) → our handler (getTraceId()) → BabelPulsarClient.publish({ traceId }) → ${peer.sdk}: same trace_id and bq-trace-id on every hop, a new meta.id per hop`;
      },
    );

    scenario(
      'to-peer',
      'trace',
      'we start a trace → the SDK publishes onward with it → our handler: one trace_id',
      async (peer) => {
        const first = uniqueTopic(`interop-${sdk}-trace-a`);
        const second = uniqueTopic(`interop-${sdk}-trace-b`);
        const seen: Seen[] = [];
        await service(second, URN_HOP2, (data, ctx) => void seen.push(snapshot(data, ctx)));
        const consumer = await peerConsumer(peer, {
          topic: first,
          subscription: `peer-${sdk}`,
          handle: [URN_HOP1],
          forward: { [URN_HOP1]: { topic: second, urn: URN_HOP2 } },
          count: 1,
        });
        const id = await publisher.publish(URN_HOP1, { hop: 1 }, { topic: first });
        const [record] = await consumer.finished;
        await waitFor('the second hop in our handler', () => seen.length === 1);
        const traceId = record!.envelope.trace_id as string;
        expect(record!.envelope.meta.id).toBe(id);
        expect(traceId).toMatch(UUID_V4);
        expect(seen[0]!.traceId).toBe(traceId);
        expect(seen[0]!.properties['bq-trace-id']).toBe(traceId);
        expect(seen[0]!.envelope.meta.lang).toBe(profile.lang);
        expect(seen[0]!.envelope.meta.id).toBe(record!.forwarded!.id);
        expect(seen[0]!.envelope.meta.id).not.toBe(id);
        return `we minted the trace id (UUID v4) → the ${peer.sdk} handler published onward with the trace id it decoded → our handler: same trace_id and bq-trace-id, meta.lang "${profile.lang}", a new meta.id`;
      },
    );

    // ---------------------------------------------------------------- OpenTelemetry across SDKs

    // Each side traces with its own SDK's OpenTelemetry support into an in-memory exporter: ours in this Jest
    // process (withTracing), the peer's in its process (--otel prints its spans). No SDK's Pulsar transport but ours
    // carries traceparent, so the trace crosses through the envelope's trace_id.
    const URN_OTEL = 'urn:babel:interop:otel.traced';
    const otelExtra =
      'unsupported' in profile.otel ? { unsupported: profile.otel.unsupported } : { note: profile.otel.note };
    scenario(
      'from-peer',
      'otel',
      "the SDK's OpenTelemetry publish starts a trace → our process span (active in the handler) is in it",
      (peer) =>
        withTracing(async (tracing) => {
          const topic = uniqueTopic(`interop-${sdk}-otel`);
          const seen: Array<{ seen: Seen; active: SpanContext | undefined }> = [];
          await service(topic, URN_OTEL, (data, ctx) => {
            seen.push({ seen: snapshot(data, ctx), active: trace.getActiveSpan()?.spanContext() });
          });
          const traced = await peerProduceTraced(peer, topic, [{ urn: URN_OTEL, data: { n: 1 } }]);
          const produced = traced.produced[0]!;
          await waitFor('our process span', () => tracing.spans(`process ${URN_OTEL}`).length === 1);
          expect(traced.spans).toHaveLength(1);
          const publishSpan = traced.spans[0]!;
          expect(publishSpan).toMatchObject({
            name: `publish ${URN_OTEL}`,
            kind: 'PRODUCER',
            parentSpanId: null,
            attributes: {
              'messaging.system': 'babelqueue',
              'messaging.operation': 'publish',
              'messaging.destination.name': URN_OTEL,
              'messaging.message.id': produced.id,
            },
          });
          const { seen: s, active } = seen[0]!;
          const traceId = publishSpan.traceId;
          expect(s.envelope.meta.id).toBe(produced.id);
          // The SDK wrote its producer span's trace id, as a UUID, into trace_id; no traceparent travelled.
          expect(s.traceId).toBe(uuidOfOtelTraceId(traceId));
          expect(s.properties.traceparent).toBeUndefined();
          const process = tracing.spans(`process ${URN_OTEL}`)[0]!;
          expect(process.kind).toBe(SpanKind.CONSUMER);
          expect(process.spanContext().traceId).toBe(traceId);
          expect(process.parentSpanContext?.spanId).toBe(parentSpanIdOf(s.traceId));
          expect(process.parentSpanContext?.isRemote).toBe(true);
          expect(process.attributes).toMatchObject({
            'messaging.system': 'babelqueue',
            'messaging.operation': 'process',
            'messaging.destination.name': topic,
            'messaging.message.id': produced.id,
            'messaging.message.conversation_id': s.traceId,
            'messaging.babelqueue.attempts': 0,
          });
          expect(active).toMatchObject({ traceId, spanId: process.spanContext().spanId });
          return (
            `${peer.sdk} ${produced.how} recorded a root PRODUCER span "publish <urn>" (trace ${traceId}) and wrote it into trace_id ` +
            `as ${s.traceId}, with no traceparent property; our CONSUMER span "process <urn>" has trace id ${traceId}, its remote ` +
            `parent derived from trace_id, and was the active span in our handler`
          );
        }),
      otelExtra,
    );

    scenario(
      'to-peer',
      'otel',
      "a span active around BabelPulsarClient.publish → the SDK's OpenTelemetry consumer span has our trace id",
      (peer) =>
        withTracing(async (tracing) => {
          const topic = uniqueTopic(`interop-${sdk}-otel`);
          const consumer = await peerConsumer(peer, {
            topic,
            subscription: `peer-${sdk}`,
            handle: [URN_OTEL],
            count: 1,
            otel: true,
          });
          const root = tracing.tracer.startSpan('interop request');
          const id = await context.with(trace.setSpan(context.active(), root), () =>
            publisher.publish(URN_OTEL, { n: 1 }, { topic }),
          );
          root.end();
          const [record] = await consumer.finished;
          const traceId = root.spanContext().traceId;
          const publishSpan = tracing.spans(`publish ${URN_OTEL}`)[0]!;
          expect(publishSpan.spanContext().traceId).toBe(traceId);
          expect(publishSpan.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
          expect(record!.envelope.meta.id).toBe(id);
          expect(record!.envelope.trace_id).toBe(uuidOfOtelTraceId(traceId));
          expect(record!.properties.traceparent).toBe(`00-${traceId}-${publishSpan.spanContext().spanId}-01`);
          const peerSpans = consumer.spans();
          expect(peerSpans).toHaveLength(1);
          const process = peerSpans[0]!;
          expect(process).toMatchObject({
            name: `process ${URN_OTEL}`,
            kind: 'CONSUMER',
            traceId,
            // Derived from trace_id as ours is: the SDK did not read the traceparent property.
            parentSpanId: parentSpanIdOf(record!.envelope.trace_id),
            parentRemote: true,
            attributes: {
              'messaging.system': 'babelqueue',
              'messaging.operation': 'process',
              'messaging.destination.name': topic,
              'messaging.message.id': id,
              'messaging.message.conversation_id': record!.envelope.trace_id,
              'messaging.babelqueue.attempts': 0,
            },
          });
          expect(record!.activeSpan).toEqual({ traceId, spanId: process.spanId });
          return (
            `our root span → BabelPulsarClient.publish: PRODUCER span "publish <urn>" in trace ${traceId}, trace_id ${record!.envelope.trace_id} ` +
            `and a traceparent property; the ${peer.sdk} SDK's handler wrapper recorded a CONSUMER span "process <urn>" with trace id ` +
            `${traceId} (active in its handler), its remote parent derived from trace_id (the traceparent property unread), ` +
            `attributes system babelqueue, destination the topic, message id, conversation_id = trace_id, attempts 0`
          );
        }),
      otelExtra,
    );

    // Envelope trace_id → OTel trace id: a UUID byte for byte (upper case or without dashes too), anything else
    // (and the all-zero id OTel calls invalid) the first 16 bytes of its SHA-256. Both consumers trace the same
    // messages; each side's process span must land in the same trace, derived the same way.
    const URN_OTEL_ID = 'urn:babel:interop:otel.trace-id';
    const sha16 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
    const MAPPED_TRACE_IDS: Array<[traceId: string, otel: string]> = [
      ['order-1042 ☕ not a uuid', sha16('order-1042 ☕ not a uuid')],
      ['ABCDEF01-2345-6789-ABCD-EF0123456789', 'abcdef0123456789abcdef0123456789'],
      ['0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdef'],
      ['00000000-0000-0000-0000-000000000000', sha16('00000000-0000-0000-0000-000000000000')],
    ];
    const sameTraceIds = (peer: PeerInfo, producer: 'node' | 'peer') =>
      withTracing(async (tracing) => {
        const topic = uniqueTopic(`interop-${sdk}-otel-id`);
        await service(topic, URN_OTEL_ID, () => undefined);
        const consumer = await peerConsumer(peer, {
          topic,
          subscription: `peer-${sdk}`,
          handle: [URN_OTEL_ID],
          count: MAPPED_TRACE_IDS.length,
          otel: true,
        });
        if (producer === 'peer') {
          await peerProduce(
            peer,
            topic,
            MAPPED_TRACE_IDS.map(([traceId], n) => ({ urn: URN_OTEL_ID, data: { n }, traceId })),
          );
        } else {
          // As a producer without OpenTelemetry would: our codec and projection, no traceparent.
          const producerHandle = await ws.createProducer({ topic });
          try {
            for (const [n, [traceId]] of MAPPED_TRACE_IDS.entries()) {
              const envelope = EnvelopeCodec.make(URN_OTEL_ID, { n }, { queue: topic, traceId });
              await producerHandle.send({
                data: EnvelopeCodec.encodeToBuffer(envelope),
                properties: pulsarProperties(envelope),
              });
            }
          } finally {
            await producerHandle.close();
          }
        }
        const records = await consumer.finished;
        await waitFor(
          'our process spans',
          () => tracing.spans(`process ${URN_OTEL_ID}`).length === MAPPED_TRACE_IDS.length,
        );
        const byConversation = (entries: Array<{ conversation: unknown; traceId: string; parent: unknown }>) =>
          Object.fromEntries(entries.map((e) => [String(e.conversation), { traceId: e.traceId, parent: e.parent }]));
        const ours = byConversation(
          tracing.spans(`process ${URN_OTEL_ID}`).map((span) => ({
            conversation: span.attributes['messaging.message.conversation_id'],
            traceId: span.spanContext().traceId,
            parent: span.parentSpanContext?.spanId,
          })),
        );
        const theirs = byConversation(
          consumer
            .spans()
            .filter((span) => span.name === `process ${URN_OTEL_ID}`)
            .map((span) => ({
              conversation: span.attributes['messaging.message.conversation_id'],
              traceId: span.traceId,
              parent: span.parentSpanId,
            })),
        );
        const expected = Object.fromEntries(
          MAPPED_TRACE_IDS.map(([traceId, otel]) => [traceId, { traceId: otel, parent: parentSpanIdOf(traceId) }]),
        );
        expect(records.map((r) => r.envelope.trace_id).sort()).toEqual(MAPPED_TRACE_IDS.map(([t]) => t).sort());
        expect(MAPPED_TRACE_IDS.every(([traceId, otel]) => otelTraceIdOf(traceId) === otel)).toBe(true);
        expect(theirs).toEqual(expected);
        expect(ours).toEqual(expected);
        const by = producer === 'peer' ? `${peer.sdk} published` : 'we published (no traceparent)';
        return (
          `${by} trace_ids ${MAPPED_TRACE_IDS.map(([t]) => JSON.stringify(t)).join(', ')}; the ${peer.sdk} SDK's consumer spans ` +
          `and ours got the same trace ids (${MAPPED_TRACE_IDS.map(([, o]) => o).join(', ')}: SHA-256 for the non-UUID and the ` +
          `all-zero id, the bytes of the upper-case and the dashless UUID) and the same derived remote parent span ids`
        );
      });
    scenario(
      'from-peer',
      'otel-id',
      'the SDK publishes odd trace_ids → its OpenTelemetry consumer spans and ours map them to the same trace ids',
      (peer) => sameTraceIds(peer, 'peer'),
      'unsupported' in profile.otel ? { unsupported: profile.otel.unsupported } : {},
    );
    scenario(
      'to-peer',
      'otel-id',
      "we publish odd trace_ids → the SDK's OpenTelemetry consumer spans and ours map them to the same trace ids",
      (peer) => sameTraceIds(peer, 'node'),
      'unsupported' in profile.otel ? { unsupported: profile.otel.unsupported } : {},
    );

    // ---------------------------------------------------------------- exact numbers (docs/contract.md#retries)

    const URN_NUM = 'urn:babel:interop:numbers.checked';
    scenario(
      'from-peer',
      'numbers',
      'numbers JavaScript cannot hold survive our retry copy: the SDK reads the same data bytes back',
      async (peer) => {
        // Peer → our server, which fails once and re-publishes a retry copy → the peer's own subscription
        // sees the original and our copy; the copy's data must be the peer's text byte for byte.
        const topic = uniqueTopic(`interop-${sdk}-numbers`);
        const seen: Seen[] = [];
        await service(
          topic,
          URN_NUM,
          (data, ctx) => {
            seen.push(snapshot(data, ctx));
            if (ctx.getAttempts() === 0) throw new Error('planned failure: retry me');
          },
          { maxAttempts: 3 },
        );
        const consumer = await peerConsumer(peer, { topic, subscription: `peer-${sdk}`, handle: [URN_NUM], count: 2 });
        const raw = `[{"urn":"${URN_NUM}","data":{"big":12345678901234567890,"one":1.0,"negZero":-0.0,"tiny":1e-7,"n":[1.0,2.50]}}]`;
        const [produced] = await peerProduce(peer, topic, raw);
        const records = await consumer.finished;
        await waitFor('our two deliveries', () => seen.length === 2);
        const dataText = (body: string) => body.slice(body.indexOf('"data":'), body.indexOf(',"meta":'));
        const [original, copy] = [...records].sort((a, b) => a.attempts - b.attempts);
        expect(original!.envelope.meta.id).toBe(produced!.id);
        expect(copy!.envelope.meta.id).toBe(produced!.id);
        expect(copy!.attempts).toBe(1);
        expect(dataText(copy!.rawBody!)).toBe(dataText(original!.rawBody!));
        expect(copy!.dataTypes).toEqual(original!.dataTypes);
        // Where the peer reports it, what the SDK's own codec makes of those numbers (its retry copies carry that).
        const reencoded = copy!.encodedBody
          ? `; the ${peer.sdk} SDK's own re-encode of what it decoded writes data ${dataText(copy!.encodedBody).slice(7)}`
          : '';
        return `${peer.sdk} wrote data ${dataText(original!.rawBody!).slice(7)}; our retry copy (attempts 1) carried exactly the same data bytes, and the ${peer.sdk} SDK decoded both to the same types (${JSON.stringify(copy!.dataTypes)})${reencoded}`;
      },
    );

    // ---------------------------------------------------------------- registration

    if (!setup.ok) {
      // A peer that cannot be set up (no toolchain, no vendored release, a failed build) fails the run,
      // naming the step that failed; it is never a silent skip.
      const step = setup.step ? ` at step "${setup.step}"` : '';
      recordSdk(sdk, { setup: 'unavailable', reason: `${setup.code}${step}: ${setup.reason}` });
      flushResults();
      it(`sets up the ${name} interop peer`, () => {
        throw new Error(`${name} interop peer setup failed${step} (${setup.code}):\n${setup.reason}`);
      });
      return;
    }
    const peer = setup.peer;
    recordSdk(sdk, { setup: 'ok', versions: peer.versions });

    beforeAll(() => {
      ws = newClient();
      publisher = new BabelPulsarClient({ client: ws });
    });
    afterEach(async () => {
      await Promise.all(peers.splice(0).map((p) => p.stop()));
      await Promise.all(services.splice(0).map((s) => s.close()));
    });
    afterAll(async () => {
      await publisher?.close();
      await ws?.close();
      flushResults();
    });

    for (const c of cases) {
      const [first, ...rest] = c.features;
      const override = profile.overrides?.[`${c.direction}:${first!}`];
      if (override && 'unsupported' in override) {
        for (const feature of c.features)
          notRun({ sdk, direction: c.direction, feature }, c.title, override.unsupported);
        continue;
      }
      if (override) {
        proof(
          { sdk, direction: c.direction, feature: first!, differs: override.differs, also: rest },
          `${label(c.direction)}: ${override.title}`,
          () => override.body(peer, kit),
          60_000,
        );
        continue;
      }
      if (c.unsupported) {
        for (const feature of c.features) notRun({ sdk, direction: c.direction, feature }, c.title, c.unsupported);
        continue;
      }
      const note = c.notApplicable ?? c.note;
      proof(
        {
          sdk,
          direction: c.direction,
          feature: first!,
          ...(note && { note }),
          ...(c.notApplicable && { status: 'not-applicable' as const }),
          also: rest,
        },
        c.title,
        () => c.body(peer),
        60_000,
      );
    }
    for (const extra of profile.extraTests ?? []) {
      it(`${name}: ${extra.title}`, () => extra.body(peer, kit), 60_000);
    }
  });
}
