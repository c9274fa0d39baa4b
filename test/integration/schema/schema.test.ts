// Payload schemas and GDPR field encryption through the real broker, on the client under test.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { randomBytes } from 'node:crypto';
import {
  AesGcmCipher,
  BabelContext,
  BabelHandler,
  BabelPulsarClient,
  defineUrn,
  EnvelopeCodec,
  InvalidPayloadError,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

interface Signup {
  user_id: number;
  email: string;
  plan: 'free' | 'pro';
}
const SIGNUP = defineUrn<Signup>('urn:babel:users:signed-up', {
  schema: {
    type: 'object',
    required: ['user_id', 'email', 'plan'],
    properties: {
      user_id: { type: 'integer', minimum: 1 },
      email: { type: 'string', minLength: 3, 'x-gdpr-sensitive': 'contact' },
      plan: { enum: ['free', 'pro'] },
    },
    additionalProperties: false,
  },
});

let client: PulsarClientLike;
let service: RunningService | null = null;
const publishers: BabelPulsarClient[] = [];
beforeAll(() => {
  client = newClient();
});
afterEach(async () => {
  await service?.close();
  service = null;
  for (const publisher of publishers.splice(0)) await publisher.close();
});
afterAll(async () => {
  await client.close();
});

function publisherFor(topic: string, cipher?: AesGcmCipher): BabelPulsarClient {
  const publisher = new BabelPulsarClient({ client, topic, ...(cipher && { cipher }) });
  publishers.push(publisher);
  return publisher;
}

async function publishRaw(topic: string, data: Record<string, unknown>): Promise<string> {
  const envelope = EnvelopeCodec.make(SIGNUP.urn, data, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
  return envelope.meta.id;
}

function signupsController(seen: Signup[]) {
  @Controller()
  class Signups {
    @BabelHandler(SIGNUP)
    handle(@Payload() data: Signup, @Ctx() _context: BabelContext) {
      seen.push(data);
    }
  }
  return Signups;
}

test('a message that breaks the schema is dead-lettered on its first delivery with every violation', async () => {
  const topic = uniqueTopic('schema-dlq');
  const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'inspect' });
  const seen: Signup[] = [];
  service = await startService([signupsController(seen)], { client, topics: topic, maxAttempts: 5 });
  await publishRaw(topic, { user_id: 0, plan: 'gold', extra: true });
  const [record] = await receiveN(dlq, 1);
  await dlq.close();
  const body = JSON.parse(record!.getData().toString('utf8')) as {
    attempts: number;
    dead_letter: { reason: string; error: string; exception: string; attempts: number };
  };
  expect(body.dead_letter).toMatchObject({ reason: 'failed', exception: 'InvalidPayloadError' });
  for (const violation of [
    'email: is required',
    'extra: is not allowed',
    'user_id: must be >= 1',
    'plan: must be one of',
  ]) {
    expect(body.dead_letter.error).toContain(violation);
  }
  expect(service.settled.map((event) => event.action)).toEqual(['dead-letter']);
  expect(seen).toEqual([]);
});

test('GDPR: the marked field travels encrypted, the handler sees it in the clear; an invalid publish sends nothing', async () => {
  const topic = uniqueTopic('schema-gdpr');
  const cipher = new AesGcmCipher(randomBytes(32));
  const wire = await client.subscribe({ topic, subscription: 'wire' });
  const seen: Signup[] = [];
  service = await startService([signupsController(seen)], { client, topics: topic, cipher });
  const publisher = publisherFor(topic, cipher);

  await expect(publisher.publish(SIGNUP, { user_id: 1, email: 'ab', plan: 'pro' })).rejects.toThrow(
    InvalidPayloadError,
  );
  await publisher.publish(SIGNUP, { user_id: 7, email: 'ayşe@example.com', plan: 'pro' });

  const [message] = await receiveN(wire, 1);
  await wire.close();
  const data = (JSON.parse(message!.getData().toString('utf8')) as { data: Record<string, unknown> }).data;
  expect(data.user_id).toBe(7);
  expect(data.email).toEqual(expect.stringMatching(/^[A-Za-z0-9+/]+=*$/));
  expect(data.email).not.toContain('example.com');
  await waitFor('the handler', () => seen.length === 1);
  expect(seen).toEqual([{ user_id: 7, email: 'ayşe@example.com', plan: 'pro' }]);
});

test('GDPR: a consumer with the wrong key fails the message (DecryptError): retried, then dead-lettered', async () => {
  const topic = uniqueTopic('schema-wrong-key');
  const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'inspect' });
  const seen: Signup[] = [];
  service = await startService([signupsController(seen)], {
    client,
    topics: topic,
    maxAttempts: 2,
    cipher: new AesGcmCipher(randomBytes(32)),
  });
  await publisherFor(topic, new AesGcmCipher(randomBytes(32))).publish(SIGNUP, {
    user_id: 7,
    email: 'a@b.c',
    plan: 'free',
  });
  const [record] = await receiveN(dlq, 1);
  await dlq.close();
  const body = JSON.parse(record!.getData().toString('utf8')) as {
    data: Record<string, unknown>;
    dead_letter: { exception: string; error: string };
  };
  expect(body.dead_letter.exception).toBe('DecryptError');
  expect(body.dead_letter.error).toContain('email');
  expect(body.data.email).not.toBe('a@b.c'); // the record keeps the value as it arrived: encrypted
  expect(service.settled.map((event) => event.action)).toEqual(['retry', 'dead-letter']);
  expect(seen).toEqual([]);
});
