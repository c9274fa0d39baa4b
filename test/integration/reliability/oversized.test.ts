// A message the consumer can receive but not re-publish (the WebSocket producer's frame
// cap) reaches a terminal outcome: after maxAttempts handler runs, one dead-letter record without the body,
// carrying the original size and message id; no endless nack loop. WebSocket-specific (its frame cap).
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { BabelHandler, EnvelopeCodec, type SettledEvent } from '../../../lib/index.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { buildProducerFrame } from '../../../lib/pulsar/websocket/producer.js';
import { receiveN, sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(90_000);

const MAX_FRAME = 1048576;
let client: PulsarWebSocketClient;
let service: RunningService | null = null;
beforeAll(() => {
  client = new PulsarWebSocketClient({ serviceUrl: webUrl() });
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await client.close();
});

/** The largest payload `build(n)` whose property-less frame stays 10 bytes under the cap. */
function largestFitting(build: (n: number) => Buffer): Buffer {
  let low = 1;
  let high = MAX_FRAME;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    const size = Buffer.byteLength(JSON.stringify(buildProducerFrame('t', { data: build(mid) }, '1')));
    if (size <= MAX_FRAME - 10) low = mid;
    else high = mid - 1;
  }
  return build(low);
}

const URN = 'urn:babel:reliability:big';

async function publishBare(topic: string, data: Buffer): Promise<void> {
  const producer = await client.createProducer({ topic });
  await producer.send({ data }); // no properties: any copy with a bq-* property is too big
  await producer.close();
}

it('gives a too-big failing message maxAttempts runs, then one dead-letter record without the body', async () => {
  const topic = uniqueTopic('big-failed');
  const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  let runs = 0;
  @Controller()
  class Failing {
    @BabelHandler(URN)
    handle() {
      runs += 1;
      throw new Error('always');
    }
  }
  service = await startService([Failing], { client, topics: topic, maxAttempts: 3, nackRedeliverTimeoutMs: 200 });
  const envelope = EnvelopeCodec.make(URN, {}, { queue: topic });
  const payload = largestFitting((n) => EnvelopeCodec.encodeToBuffer({ ...envelope, data: { blob: 'x'.repeat(n) } }));
  await publishBare(topic, payload);
  const [record] = await receiveN(dlq, 1, 60_000);
  const body = JSON.parse(record!.getData().toString('utf8'));
  expect(EnvelopeCodec.accepts(body)).toBe(true);
  expect(body).toMatchObject({ job: URN, trace_id: envelope.trace_id, data: {}, meta: envelope.meta, attempts: 3 });
  expect(body.dead_letter).toMatchObject({
    reason: 'failed',
    error: 'always',
    attempts: 3,
    body_omitted: true,
    original_size: payload.length,
    original_message_id: expect.any(String),
  });
  expect(record!.getProperties()).toMatchObject({
    'bq-dead-letter-reason': 'failed',
    'bq-dead-letter-body-omitted': 'true',
    'bq-dead-letter-original-size': String(payload.length),
  });
  expect(runs).toBe(3);
  const final = service.settled.at(-1) as SettledEvent;
  expect(final).toMatchObject({ action: 'dead-letter', written: true, bodyOmitted: true });
  await sleep(1500);
  expect(runs).toBe(3); // it ended: no further deliveries
  await dlq.close();
});

it('dead-letters a too-big poison body once, with an empty payload and its properties', async () => {
  const topic = uniqueTopic('big-poison');
  const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  service = await startService([], { client, topics: topic, maxAttempts: 3, nackRedeliverTimeoutMs: 200 });
  const payload = largestFitting((n) => Buffer.alloc(n, 0xff)); // not UTF-8: poison
  await publishBare(topic, payload);
  const [record] = await receiveN(dlq, 1, 60_000);
  expect(record!.getData().length).toBe(0);
  expect(record!.getProperties()).toMatchObject({
    'bq-dead-letter-reason': 'poison',
    'bq-dead-letter-body-omitted': 'true',
    'bq-dead-letter-original-size': String(payload.length),
  });
  await waitFor('one settlement', () => service!.settled.length === 1);
  await sleep(1000);
  expect(service.settled).toHaveLength(1);
  await dlq.close();
});
