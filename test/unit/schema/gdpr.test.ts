import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { BabelNonRetriableError, EnvelopeCodec } from '../../../lib/envelope/index.js';
import { AesGcmCipher } from '../../../lib/index.js';
import {
  DecryptError,
  UnprotectedFieldError,
  InvalidKeySizeError,
  MalformedCiphertextError,
  protect,
  sensitivePaths,
  unprotect,
} from '../../../lib/schema/index.js';
import { handlerPayload, publishPayload } from '../../../lib/schema/message-payload.js';

const schema = {
  type: 'object',
  properties: {
    email: { type: 'string', 'x-gdpr-sensitive': true, minLength: 3 },
    salary: { type: 'number', 'x-gdpr-sensitive': 'financial' },
    profile: { type: 'object', properties: { name: { 'x-gdpr-sensitive': true } } },
    addresses: { type: 'array', items: { type: 'object', properties: { line: { 'x-gdpr-sensitive': true } } } },
    card: { type: 'object', 'x-gdpr-sensitive': true },
    plain: { type: 'string', 'x-gdpr-sensitive': false },
  },
};

test('sensitivePaths: dotted, field[] for arrays, sorted; false or "" marks nothing', () => {
  expect(sensitivePaths(schema)).toEqual(['addresses[].line', 'card', 'email', 'profile.name', 'salary']);
  expect(sensitivePaths({ 'x-gdpr-sensitive': true })).toEqual(['']);
  expect(sensitivePaths({ properties: { a: { 'x-gdpr-sensitive': '' } } })).toEqual([]);
});

test('protect / unprotect round-trip numbers and objects exactly, leave the rest and the input alone', () => {
  const cipher = new AesGcmCipher(randomBytes(32));
  const { envelope } = EnvelopeCodec.decode(
    Buffer.from(
      '{"job":"u","trace_id":"t","data":{"email":"ayşe@example.com","salary":12345678901234567890.10,"profile":{"name":"Ayşe","age":30},' +
        '"addresses":[{"line":"1 Main St"},{"line":"2 Side St"}],"card":{"no":"4111","exp":[1,2]},"plain":"x"},"attempts":0,"meta":{"id":"i","schema_version":1}}',
    ),
  );
  const data = envelope.data as Record<string, unknown>;
  const before = EnvelopeCodec.encode(envelope);
  const protectedData = protect(data, schema, cipher);
  expect(EnvelopeCodec.encode(envelope)).toBe(before);
  for (const value of [
    protectedData.email,
    protectedData.salary,
    (protectedData.profile as Record<string, unknown>).name,
    protectedData.card,
  ]) {
    expect(value).toEqual(expect.stringMatching(/^[A-Za-z0-9+/]+=*$/));
  }
  expect((protectedData.profile as Record<string, unknown>).age).toBe(30);
  expect(protectedData.plain).toBe('x');
  const restored = unprotect(protectedData, schema, cipher);
  expect(EnvelopeCodec.encode({ ...envelope, data: restored })).toBe(before);
});

test('wrong key and tampering are DecryptError; garbage and a non-string marked value are refused', () => {
  const writer = new AesGcmCipher(randomBytes(16));
  const reader = new AesGcmCipher(randomBytes(16));
  const sealed = protect({ email: 'a@b.c' }, schema, writer);
  expect(() => unprotect(sealed, schema, reader)).toThrow(DecryptError);
  const raw = Buffer.from(sealed.email as string, 'base64');
  raw[14] = raw[14]! ^ 1;
  expect(() => unprotect({ email: raw.toString('base64') }, schema, writer)).toThrow(
    /cannot decrypt the protected field email/,
  );
  expect(() => unprotect({ email: 'not base64!' }, schema, writer)).toThrow(UnprotectedFieldError);
  expect(() => writer.decrypt('AAAA')).toThrow(MalformedCiphertextError);
  expect(() => unprotect({ salary: 10 }, schema, writer)).toThrow(UnprotectedFieldError);
});

test('a marked field that is not a ciphertext is refused, not retried, and its value is never quoted', () => {
  const cipher = new AesGcmCipher(randomBytes(32));
  for (const value of [10, null, true, { n: 1 }, ['a'], 'secret-in-clear@example.com']) {
    let thrown: unknown;
    try {
      unprotect({ email: value }, schema, cipher);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnprotectedFieldError);
    expect(thrown).toBeInstanceOf(BabelNonRetriableError);
    expect((thrown as UnprotectedFieldError).path).toBe('email');
    expect((thrown as Error).message).toMatch(/^the protected field email is not a ciphertext: /);
    expect((thrown as Error).message).not.toContain('secret-in-clear');
    // Through the handler's path too: the value never reaches the handler.
    expect(() => handlerPayload('u', { email: value }, schema, cipher)).toThrow(UnprotectedFieldError);
  }
});

test('a decrypted value that is not JSON is a DecryptError that quotes none of the decrypted text', () => {
  const cipher = new AesGcmCipher(randomBytes(32));
  const sealed = cipher.encrypt(Buffer.from('hunter2-password', 'utf8'));
  let thrown: unknown;
  try {
    unprotect({ email: sealed }, schema, cipher);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(DecryptError);
  expect((thrown as Error).message).toBe(
    'cannot decrypt the protected field email: the decrypted value is not one JSON value',
  );
  expect((thrown as Error).message).not.toMatch(/hunter|password|unter/);
});

test('key sizes 16/24/32 only; a key supplier rotates: new values under the current key, old ones still open', () => {
  expect(() => new AesGcmCipher(randomBytes(20))).toThrow(InvalidKeySizeError);
  for (const size of [16, 24, 32]) {
    const cipher = new AesGcmCipher(randomBytes(size));
    expect(cipher.decrypt(cipher.encrypt(Buffer.from('"x"'))).toString()).toBe('"x"');
  }
  const first = randomBytes(32);
  const second = randomBytes(32);
  let keys: { current: Buffer; previous?: Buffer[] } = { current: first };
  const cipher = new AesGcmCipher(() => keys);
  const old = cipher.encrypt(Buffer.from('"old"'));
  keys = { current: second, previous: [first] };
  const fresh = cipher.encrypt(Buffer.from('"new"'));
  expect(cipher.decrypt(old).toString()).toBe('"old"');
  expect(new AesGcmCipher(second).decrypt(fresh).toString()).toBe('"new"');
  keys = { current: second };
  expect(() => cipher.decrypt(old)).toThrow(/does not authenticate under any key/);
});

test('publish validates the cleartext then protects; the handler side unprotects then validates', () => {
  const cipher = new AesGcmCipher(randomBytes(32));
  expect(() => publishPayload('u', { email: 'ab' }, schema, cipher)).toThrow(/email: must NOT have fewer than 3/);
  const sent = publishPayload('u', { email: 'abc' }, schema, cipher);
  expect(sent.email).not.toBe('abc');
  expect(handlerPayload('u', sent, schema, cipher)).toEqual({ email: 'abc' });
  expect(() => publishPayload('u', { email: 'abc' }, schema, undefined)).toThrow(/no cipher is configured/);
  expect(() => handlerPayload('u', sent, schema, undefined)).toThrow(DecryptError);
});

test('through the server: a marked field sent in the clear is dead-lettered at once as not retriable', async () => {
  const { Controller } = await import('@nestjs/common');
  const { Test } = await import('@nestjs/testing');
  const { BabelHandler, BabelPulsarServer, BabelQueueModule, defineUrn } = await import('../../../lib/index.js');
  const { BabelQueueTestHarness, InMemoryPulsar } = await import('../../../lib/testing/index.js');
  const { pulsarProperties } = await import('../../../lib/pulsar/binding.js');
  const CONTACT = defineUrn<{ email: string }>('urn:babel:crm:contact-added', { schema });
  const received: unknown[] = [];
  @Controller()
  class Contacts {
    @BabelHandler(CONTACT, { maxAttempts: 3 })
    added(data: { email: string }): void {
      received.push(data);
    }
  }
  const pulsar = new InMemoryPulsar();
  const quiet = { log: () => {}, warn: () => {}, error: () => {} };
  const moduleRef = await Test.createTestingModule({
    imports: [
      BabelQueueModule.forRoot({
        client: pulsar,
        topic: 'contacts',
        logger: quiet,
        gdpr: { cipher: new AesGcmCipher(randomBytes(32)) },
      }),
    ],
    controllers: [Contacts],
  }).compile();
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
  await app.listen();
  const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), pulsar);
  try {
    const envelope = EnvelopeCodec.make(CONTACT.urn, { email: 12345 }, { queue: 'contacts' });
    const sent = await harness.publishRaw(EnvelopeCodec.encodeToBuffer(envelope), pulsarProperties(envelope));
    const outcome = await sent.outcome();
    expect(outcome.kind).toBe('dead-lettered');
    expect(outcome.deliveries).toHaveLength(1);
    expect(outcome.retries).toHaveLength(0);
    const record = JSON.parse(outcome.deadLetter!.data.toString('utf8')) as { dead_letter: { error: string } };
    expect(record.dead_letter.error).toMatch(/^the protected field email is not a ciphertext/);
    expect(received).toEqual([]);
  } finally {
    await harness.close();
    await app.close();
  }
});
