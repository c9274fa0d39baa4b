import { BabelContext, EnvelopeCodec } from '../../../lib/index.js';
import { bypassExternalEffects, isReplay, resetForRedrive } from '../../../lib/redrive/index.js';
import { envelopeOf, FakeMessage } from '../../support/messages.js';

test('isReplay is true only for a non-empty bq-replay-bypass property', () => {
  expect(isReplay({ 'bq-replay-bypass': '1' })).toBe(true);
  expect(isReplay({ 'bq-replay-bypass': '' })).toBe(false);
  expect(isReplay({})).toBe(false);
  expect(isReplay(undefined)).toBe(false);
});

test('BabelContext.isReplay reads the delivered property', () => {
  const envelope = envelopeOf();
  const replayed = new FakeMessage(Buffer.from(''), { 'bq-replay-bypass': '1' });
  expect(new BabelContext([envelope, replayed, 'orders', envelope.job]).isReplay()).toBe(true);
  const plain = new FakeMessage(Buffer.from(''), {});
  expect(new BabelContext([envelope, plain, 'orders', envelope.job]).isReplay()).toBe(false);
});

test('bypassExternalEffects skips the effect on a replay', async () => {
  let runs = 0;
  await bypassExternalEffects({ 'bq-replay-bypass': '1' }, () => runs++);
  await bypassExternalEffects({}, () => runs++);
  expect(runs).toBe(1);
});

test('resetForRedrive drops dead_letter, zeroes attempts and keeps the rest exactly', () => {
  const text =
    '{"job":"urn:a","trace_id":"t","data":{"big":12345678901234567890},"meta":{"id":"m","queue":"q","lang":"go",' +
    '"schema_version":1,"created_at":1},"attempts":3,"extra":1.50,"dead_letter":{"reason":"failed","error":null,' +
    '"exception":null,"failed_at":1,"original_queue":"q","attempts":3,"lang":"node"}}';
  const envelope = EnvelopeCodec.decode(text).envelope;
  if (!EnvelopeCodec.accepts(envelope)) throw new Error('fixture rejected');
  expect(EnvelopeCodec.encode(resetForRedrive(envelope))).toBe(
    '{"job":"urn:a","trace_id":"t","data":{"big":12345678901234567890},"meta":{"id":"m","queue":"q","lang":"go",' +
      '"schema_version":1,"created_at":1},"attempts":0,"extra":1.50}',
  );
  expect(envelope.dead_letter).toBeDefined(); // the input is not changed
});
