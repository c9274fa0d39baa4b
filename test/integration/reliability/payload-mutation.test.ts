// A handler's changes to its payload never leak into the retry copy or the
// dead-letter record; both carry the data as it arrived (docs/contract.md#retries, #dead-letter-records).
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, uniqueTopic } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

let client: PulsarClientLike & { close(): Promise<unknown> };
let service: RunningService | null = null;
beforeAll(() => {
  client = newClient();
});
afterAll(async () => {
  await service?.close();
  await client.close();
});

const URN = 'urn:babel:reliability:mutates';

it('retries and dead-letters the data as it arrived, whatever the handler did to it', async () => {
  const topic = uniqueTopic('mutates');
  const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  const seen: unknown[] = [];
  @Controller()
  class Mutating {
    @BabelHandler(URN)
    handle(@Payload() data: Record<string, unknown>, @Ctx() ctx: BabelContext) {
      seen.push(JSON.parse(JSON.stringify(data)));
      data.n = 'changed';
      data.added = true;
      (data.nested as { list: unknown[] }).list.push('extra');
      const envelope = ctx.getEnvelope() as unknown as Record<string, unknown>;
      envelope.trace_id = 'rewritten';
      (envelope.meta as Record<string, unknown>).queue = 'elsewhere';
      throw new Error('after mutating');
    }
  }
  service = await startService([Mutating], { client, topics: topic, maxAttempts: 2 });
  const original = { n: 1, nested: { list: [1, 2] } };
  const envelope = EnvelopeCodec.make(URN, original, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
  const [record] = await receiveN(dlq, 1);
  await dlq.close();
  expect(seen).toEqual([original, original]);
  const body = JSON.parse(record!.getData().toString('utf8'));
  expect(body).toMatchObject({ data: original, trace_id: envelope.trace_id, meta: envelope.meta });
  expect(body.dead_letter.original_queue).toBe(topic);
});
