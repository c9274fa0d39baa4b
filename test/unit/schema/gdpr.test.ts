import { randomBytes } from 'node:crypto';
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import { AesGcmCipher } from '../../../lib/index.js';
import {
  DecryptError,
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

test('wrong key, tampering and garbage are DecryptError; a non-string marked value is left alone', () => {
  const writer = new AesGcmCipher(randomBytes(16));
  const reader = new AesGcmCipher(randomBytes(16));
  const sealed = protect({ email: 'a@b.c' }, schema, writer);
  expect(() => unprotect(sealed, schema, reader)).toThrow(DecryptError);
  const raw = Buffer.from(sealed.email as string, 'base64');
  raw[14] = raw[14]! ^ 1;
  expect(() => unprotect({ email: raw.toString('base64') }, schema, writer)).toThrow(
    /cannot decrypt the protected field email/,
  );
  expect(() => unprotect({ email: 'not base64!' }, schema, writer)).toThrow(DecryptError);
  expect(() => writer.decrypt('AAAA')).toThrow(MalformedCiphertextError);
  expect(unprotect({ salary: 10 }, schema, writer)).toEqual({ salary: 10 });
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
