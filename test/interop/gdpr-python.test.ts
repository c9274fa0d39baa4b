// GDPR field encryption across SDKs: this library's AesGcmCipher and the Python SDK's babelqueue.gdpr (with the
// peer's AES-GCM cipher over the same key), through the real broker, both ways. Peer: test/interop/peers/python.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { randomBytes } from 'node:crypto';
import { AesGcmCipher, BabelHandler, BabelPulsarClient, defineUrn, type PulsarClientLike } from '../../lib/index.js';
import { newClient, uniqueTopic, waitFor } from '../support/broker.js';
import { startService, type RunningService } from '../support/nest-app.js';
import { peerProduceProtected, setupPeer, startPeerConsumer } from './support/peers.js';

jest.setTimeout(120_000);

interface Patient {
  patient_id: number;
  email: string;
  profile: { name: string; born: number };
  notes: string[];
  visits: Array<{ clinic: string; cost: number }>;
}
const schema = {
  type: 'object',
  required: ['patient_id', 'email'],
  properties: {
    patient_id: { type: 'integer' },
    email: { type: 'string', minLength: 3, 'x-gdpr-sensitive': 'contact' },
    profile: { type: 'object', 'x-gdpr-sensitive': true, properties: { name: { type: 'string' } } },
    notes: { type: 'array', items: { type: 'string', 'x-gdpr-sensitive': 'health' } },
    visits: {
      type: 'array',
      items: { type: 'object', properties: { cost: { type: 'number', 'x-gdpr-sensitive': true } } },
    },
  },
};
const PATIENT = defineUrn<Patient>('urn:babel:clinic:patient-registered', { schema });
const DATA: Patient = {
  patient_id: 42,
  email: 'ayşe@example.com',
  profile: { name: 'Ayşe Çelik 😀', born: 1984 },
  notes: ['allergic: penicillin', 'ğüş'],
  visits: [
    { clinic: 'north', cost: 120.5 },
    { clinic: 'south', cost: 0 },
  ],
};
const BASE64 = /^[A-Za-z0-9+/]+=*$/;

/** The marked values are ciphertext strings; the others are as sent. */
function expectProtected(data: Record<string, any>): void {
  expect(data.patient_id).toBe(42);
  for (const value of [data.email, data.profile, ...data.notes, ...data.visits.map((v: { cost: unknown }) => v.cost)]) {
    expect(value).toEqual(expect.stringMatching(BASE64));
  }
  expect(data.visits.map((v: { clinic: string }) => v.clinic)).toEqual(['north', 'south']);
}

describe('GDPR field encryption with the Python SDK (real broker)', () => {
  const setup = setupPeer('python');
  if (!setup.ok) {
    it('sets up the Python interop peer', () => {
      throw new Error(`Python interop peer setup failed (${setup.code}): ${setup.reason}`);
    });
    return;
  }
  const peer = setup.peer;
  let client: PulsarClientLike;
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

  it('Node protects, Python unprotects with the same key', async () => {
    const key = randomBytes(32);
    const topic = uniqueTopic('gdpr-node-py');
    const consumer = await startPeerConsumer(peer, {
      topic,
      subscription: 'interop',
      handle: [PATIENT.urn],
      count: 1,
      gdpr: { key, schema },
    });
    const publisher = new BabelPulsarClient({ client, topic, cipher: new AesGcmCipher(key) });
    try {
      await publisher.publish(PATIENT, DATA);
      const [record] = await consumer.finished;
      expectProtected(record!.envelope.data);
      expect(record!.clearData).toEqual(DATA);
    } finally {
      await consumer.stop();
      await publisher.close();
    }
  });

  it('Python protects, Node unprotects with the same key before the handler runs', async () => {
    const key = randomBytes(16); // AES-128 this way round
    const topic = uniqueTopic('gdpr-py-node');
    const seen: Array<{ data: Patient }> = [];
    @Controller()
    class Patients {
      @BabelHandler(PATIENT)
      registered(@Payload() data: Patient) {
        seen.push({ data });
      }
    }
    service = await startService([Patients], { client, topics: topic, cipher: new AesGcmCipher(key) });
    const wire = await client.subscribe({ topic, subscription: 'wire' });
    try {
      await peerProduceProtected(peer, topic, [{ urn: PATIENT.urn, data: { ...DATA } }], { key, schema });
      await waitFor('the handler', () => seen.length === 1);
      expect(seen[0]!.data).toEqual(DATA);
      const message = await wire.receive(10_000);
      await wire.acknowledge(message);
      expectProtected((JSON.parse(message.getData().toString('utf8')) as { data: Record<string, any> }).data);
    } finally {
      await wire.close();
    }
  });
});
