// Topic patterns through the real broker, on the client under test: the topics that match at start and one
// created later are consumed; a retry copy goes back to its message's own topic, a dead letter to that topic's .dlq.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  BabelNonRetriableError,
  EnvelopeCodec,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { createPulsarClient, pulsarProperties } from '../../../lib/pulsar/index.js';
import { serviceUrl, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { subscriptionsOf } from '../../support/dead-letters.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const prefix = uniqueTopic('pattern');
const full = (suffix: string) => `persistent://public/default/${prefix}-${suffix}`;
const short = (suffix: string) => `${prefix}-${suffix}`;
const handled: Array<{ n: number; topic: string; attempts: number }> = [];

@Controller()
class PatternOrders {
  @BabelHandler('urn:babel:pattern:order', {
    topicsPattern: `${prefix}-.+`,
    patternDiscoveryMs: 200,
    subscription: 'pattern-orders',
  })
  order(@Payload() data: { n: number; fail?: 'once' | 'refuse' }, @Ctx() ctx: BabelContext) {
    handled.push({ n: data.n, topic: ctx.getTopic(), attempts: ctx.getAttempts() });
    if (data.fail === 'refuse') throw new BabelNonRetriableError(`order ${data.n} refused`);
    if (data.fail === 'once' && ctx.getAttempts() === 0) throw new Error(`order ${data.n}: try again`);
  }
}

let client: PulsarClientLike;
let service: RunningService;

async function publish(topic: string, data: Record<string, unknown>) {
  const envelope = EnvelopeCodec.make('urn:babel:pattern:order', data, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
}

beforeAll(async () => {
  ({ client } = await createPulsarClient({ serviceUrl: serviceUrl() }));
  // Two matching topics and a dead-letter topic that the expression would match, all there before start.
  await publish(full('a'), { n: 0 });
  await publish(full('b'), { n: 0 });
  await publish(`${full('a')}.dlq`, { n: -1 });
  // A partitioned topic is one topic of the pattern (its partitions are not topics of their own).
  const created = await fetch(`${webUrl()}/admin/v2/persistent/public/default/${prefix}-p/partitions`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: '2',
  });
  expect(created.status).toBe(204);
  service = await startService([PatternOrders], { client, topics: `${prefix}-unused`, maxAttempts: 3 });
});
afterAll(async () => {
  await service?.close();
  await client?.close();
});

describe('topic patterns (real broker)', () => {
  it('consumes the matching topics, one created after start, and settles each on its own topic', async () => {
    expect(service.server.describe().map(({ topic }) => topic)).toEqual([full('a'), full('b'), full('p')]);
    await publish(full('a'), { n: 1 });
    await publish(full('p'), { n: 5, fail: 'once' });
    await publish(full('b'), { n: 2, fail: 'once' });
    await publish(full('a'), { n: 3, fail: 'refuse' });
    // Created after start: found by the next discovery, and consumed from its first message.
    await publish(full('c'), { n: 4 });

    await waitFor('every order settled', () => {
      const acked = service.settled.filter(({ action }) => action === 'ack').length;
      return acked >= 4 && service.settled.some(({ action }) => action === 'dead-letter');
    });
    // ctx.getTopic(): each found topic in the pattern's own form (written short, so short names).
    expect(handled.filter(({ n }) => n > 0).sort((x, y) => x.n - y.n || x.attempts - y.attempts)).toEqual([
      { n: 1, topic: short('a'), attempts: 0 },
      { n: 2, topic: short('b'), attempts: 0 },
      // The retry copy came back on order 2's own topic.
      { n: 2, topic: short('b'), attempts: 1 },
      { n: 3, topic: short('a'), attempts: 0 },
      { n: 4, topic: short('c'), attempts: 0 },
      // The partitioned topic's copy went back to the partitioned topic, not to one partition as a topic.
      { n: 5, topic: short('p'), attempts: 0 },
      { n: 5, topic: short('p'), attempts: 1 },
    ]);
    const retries = service.settled.filter(({ action }) => action === 'retry');
    expect(
      retries.map(({ topic, written }) => ({ topic, written })).sort((x, y) => x.topic.localeCompare(y.topic)),
    ).toEqual([
      { topic: full('b'), written: true },
      { topic: full('p'), written: true },
    ]);
    const deadLetter = service.settled.find(({ action }) => action === 'dead-letter');
    expect(deadLetter).toMatchObject({ topic: full('a'), deadLetterTopic: `${full('a')}.dlq`, written: true });
    // Dead-letter topics never match: no record goes round again through the pattern's subscription.
    expect(handled.some(({ n }) => n < 0)).toBe(false);
    expect(await subscriptionsOf(`${prefix}-a.dlq`)).not.toContain('pattern-orders');
    expect(service.server.describe().map(({ topic }) => topic)).toEqual([full('a'), full('b'), full('p'), full('c')]);
  });
});
