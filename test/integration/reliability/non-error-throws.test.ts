// A handler that throws something other than an Error keeps its cause in the dead-letter record (docs/contract.md#dead-letter-records).
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, uniqueTopic } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

let client: PulsarClientLike & { close(): Promise<unknown> };
let service: RunningService | null = null;
beforeAll(() => {
  client = newClient();
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await client.close();
});

const URN = 'urn:babel:reliability:throws';

/** What each thrown value must become: dead_letter.error / exception, and the onError message. */
const cases: Array<{ name: string; thrown: () => unknown; error: string | null; exception: string | null }> = [
  { name: 'a string', thrown: () => 'text', error: 'text', exception: null },
  { name: 'undefined', thrown: () => undefined, error: null, exception: null },
  { name: 'null', thrown: () => null, error: null, exception: null },
  { name: 'a plain object', thrown: () => ({ code: 42 }), error: '{"code":42}', exception: null },
  { name: 'an object with message and name', thrown: () => ({ message: 'm', name: 'N' }), error: 'm', exception: 'N' },
];

describe('a handler that throws a non-Error value', () => {
  it.each(cases)(
    'keeps the cause when it throws $name (dead letter and onError)',
    async ({ thrown, error, exception }) => {
      const topic = uniqueTopic('throws');
      const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
      const reported: Error[] = [];
      @Controller()
      class Throwing {
        @BabelHandler(URN)
        handle(@Payload() _data: unknown) {
          throw thrown();
        }
      }
      service = await startService([Throwing], {
        client,
        topics: topic,
        maxAttempts: 1,
        onError: (e) => void reported.push(e),
      });
      const envelope = EnvelopeCodec.make(URN, { n: 1 }, { queue: topic });
      const producer = await client.createProducer({ topic });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
      await producer.close();
      const [record] = await receiveN(dlq, 1);
      await dlq.close();
      const body = JSON.parse(record!.getData().toString('utf8'));
      expect(body.dead_letter).toMatchObject({ reason: 'failed', error, exception });
      expect(reported).toHaveLength(1);
      expect(reported[0]!.message).toBe(error ?? '');
      expect(reported[0]!.cause).toEqual(thrown());
    },
  );

  it('keeps the cause of Promise.reject(undefined)', async () => {
    const topic = uniqueTopic('rejects');
    const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
    @Controller()
    class Rejecting {
      @BabelHandler(URN)
      handle() {
        return Promise.reject(undefined);
      }
    }
    service = await startService([Rejecting], { client, topics: topic, maxAttempts: 1 });
    const envelope = EnvelopeCodec.make(URN, {}, { queue: topic });
    const producer = await client.createProducer({ topic });
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
    await producer.close();
    const [record] = await receiveN(dlq, 1);
    await dlq.close();
    expect(JSON.parse(record!.getData().toString('utf8')).dead_letter).toMatchObject({ error: null, exception: null });
  });
});
