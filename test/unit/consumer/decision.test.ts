// The pure decision logic against docs/contract.md (settlement, routing, retries, dead-letter records).
import {
  decideSettlement,
  inspect,
  type InboundMessage,
  type Inspection,
  type Outcome,
  type SettlementPolicy,
} from '../../../lib/consumer/index.js';
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import { envelopeOf, wire } from '../../support/messages.js';

const TOPIC = 'persistent://public/default/orders';
const NOW = 1_780_000_000_000;
const policy = (overrides: Partial<SettlementPolicy> = {}): SettlementPolicy => ({
  maxAttempts: 3,
  retryBy: 'republish',
  deadLetter: true,
  now: NOW,
  ...overrides,
});
const handled: Outcome = { kind: 'handled' };
const failed = (error: unknown = new TypeError('boom')): Outcome => ({ kind: 'failed', reason: 'failed', error });
const unknownUrn: Outcome = { kind: 'failed', reason: 'unknown_urn', error: new Error('no handler') };

function inbound(payload: Buffer, properties: Record<string, string>, redeliveryCount = 0): InboundMessage {
  return { payload, properties, redeliveryCount, topic: TOPIC };
}
function valid(properties: Record<string, string> = {}, envelope = envelopeOf(), redeliveryCount = 0): InboundMessage {
  const w = wire(envelope);
  return inbound(w.payload, { ...w.properties, ...properties }, redeliveryCount);
}
function dispatched(message: InboundMessage): Extract<Inspection, { kind: 'dispatch' }> {
  const inspection = inspect(message);
  if (inspection.kind !== 'dispatch') throw new Error(`expected dispatch, got ${inspection.kind}`);
  return inspection;
}
const decide = (message: InboundMessage, outcome: Outcome, p = policy()) =>
  decideSettlement(message, inspect(message), outcome, p);
const body = (data: Buffer) => JSON.parse(data.toString('utf8'));

describe('bq-schema-version gate (31–36)', () => {
  it.each([[undefined], [''], [' \t'], [' '], ['\n\u000b\f\r'], ['1']])('decodes the body for %j', (value) => {
    const message = valid(value === undefined ? {} : { 'bq-schema-version': value });
    if (value === undefined) delete message.properties['bq-schema-version'];
    expect(inspect(message).kind).toBe('dispatch');
  });

  it.each(['2', '01', 'x', ' 1', '1 ', '\t1\n', '\u00a0', '\u0085', '\u3000', '\ufeff', '\u00a01', '1\u3000'])(
    'rejects %j without decoding, acknowledged on the first delivery',
    (value) => {
      // Even a body that is not JSON at all is never looked at.
      const message = inbound(Buffer.from([0xff, 0xfe]), { 'bq-schema-version': value, 'bq-attempts': '0' });
      const inspection = inspect(message);
      expect(inspection).toEqual({ kind: 'gate-rejected', received: value });
      for (const p of [policy({ maxAttempts: 5, deadLetter: false }), policy({ retryBy: 'nack' }), policy()]) {
        expect(decideSettlement(message, inspection, handled, p).action).toBe('ack');
      }
    },
  );

  it('treats a "1" property with a body schema_version 2 as poison, not gate-rejected (36)', () => {
    const envelope = envelopeOf();
    envelope.meta.schema_version = 2;
    const inspection = inspect(valid({ 'bq-schema-version': '1' }, envelope));
    expect(inspection.kind).toBe('poison');
  });
});

describe('routing (37–43)', () => {
  it('routes on the bq-job property when present and not blank (37)', () => {
    const inspection = dispatched(valid({ 'bq-job': 'urn:babel:orders:other' }));
    expect(inspection.urn).toBe('urn:babel:orders:other');
  });

  it.each([[undefined], [''], ['  \t']])('falls back to the body URN when bq-job is %j (38)', (value) => {
    const message = valid();
    if (value === undefined) delete message.properties['bq-job'];
    else message.properties['bq-job'] = value;
    const inspection = dispatched(message);
    expect(inspection.urn).toBe('urn:babel:orders:created');
    expect(inspection.mismatch).toBeNull();
  });

  it('reports a mismatch with both URNs and still routes on the property (39)', () => {
    const inspection = dispatched(valid({ 'bq-job': 'urn:babel:x' }));
    expect(inspection.mismatch).toEqual({ propertyUrn: 'urn:babel:x', bodyUrn: 'urn:babel:orders:created' });
    expect(inspection.urn).toBe('urn:babel:x');
  });

  it('trims ASCII whitespace from bq-job', () => {
    const inspection = dispatched(valid({ 'bq-job': ' urn:babel:orders:created\t' }));
    expect(inspection.urn).toBe('urn:babel:orders:created');
    expect(inspection.mismatch).toBeNull();
  });

  it('gives the handler the body envelope (41)', () => {
    const envelope = envelopeOf('urn:babel:orders:created', { order_id: 7, note: 'Café' });
    const inspection = dispatched(valid({ 'bq-job': 'urn:babel:x' }, envelope));
    expect(inspection.envelope.data).toEqual({ order_id: 7, note: 'Café' });
    expect(inspection.envelope.trace_id).toBe(envelope.trace_id);
    expect(inspection.envelope.job).toBe('urn:babel:orders:created');
  });

  it.each([
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xc3, 0x28])],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf])],
    ['malformed JSON', Buffer.from('{"job":')],
    ['a JSON array', Buffer.from('[1,2]')],
    ['a JSON string', Buffer.from('"x"')],
    ['an object without URN', Buffer.from('{"trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0}')],
    [
      'an envelope that fails accepts()',
      Buffer.from('{"job":"urn:x","trace_id":"t","data":[],"meta":{"schema_version":1},"attempts":0}'),
    ],
  ])('classifies %s as poison even when bq-job is set (42, 43)', (_label, payload) => {
    const inspection = inspect(inbound(payload, { 'bq-job': 'urn:babel:orders:created', 'bq-schema-version': '1' }));
    expect(inspection.kind).toBe('poison');
    if (inspection.kind === 'poison') expect(inspection.reason).toMatch(/\S/);
  });
});

describe('attempts (44–49)', () => {
  const attemptsOf = (properties: Record<string, string>, bodyAttempts: number, redelivery = 0) => {
    const envelope = envelopeOf();
    envelope.attempts = bodyAttempts;
    const message = valid({}, envelope, redelivery);
    delete message.properties['bq-attempts'];
    Object.assign(message.properties, properties);
    return dispatched(message).envelope.attempts;
  };

  it.each([
    [0, 0, 0],
    [0, 2, 2],
    [2, 5, 5],
    [5, 1, 5],
    [4, 0, 4],
    [3, 3, 3],
  ])('body %i, redelivery %i → %i (44)', (bodyAttempts, redelivery, expected) => {
    expect(attemptsOf({}, bodyAttempts, redelivery)).toBe(expected);
  });

  it('takes bq-attempts over the body (45, 46)', () => {
    expect(attemptsOf({ 'bq-attempts': '4' }, 0)).toBe(4);
    expect(attemptsOf({ 'bq-attempts': '1' }, 5)).toBe(1);
  });

  it.each(['', '-1', '+1', ' 1', '1.0', 'abc', '2147483648'])(
    'ignores bq-attempts %j and uses the body (47)',
    (value) => {
      expect(attemptsOf({ 'bq-attempts': value }, 2)).toBe(2);
    },
  );

  it('reads "007" as 7 and "2147483647" as itself (48)', () => {
    expect(attemptsOf({ 'bq-attempts': '007' }, 0)).toBe(7);
    expect(attemptsOf({ 'bq-attempts': '2147483647' }, 0)).toBe(2147483647);
  });

  it('uses the redelivery count when it is greater, with no −1 (49)', () => {
    expect(attemptsOf({ 'bq-attempts': '1' }, 0, 4)).toBe(4);
  });
});

describe('settlement (50–70)', () => {
  it('acknowledges a handled message and writes nothing (70)', () => {
    expect(decide(valid(), handled)).toEqual({ action: 'ack' });
  });

  it('re-publishes a first failure with bq-attempts "1" and body attempts 1 (51)', () => {
    const message = valid({ traceparent: '00-abc' });
    const settlement = decide(message, failed());
    expect(settlement.action).toBe('retry');
    if (settlement.action !== 'retry') return;
    expect(settlement.attempt).toBe(1);
    expect(settlement.copy.properties).toEqual({ ...message.properties, 'bq-attempts': '1' });
    const copy = body(settlement.copy.data);
    expect(copy.attempts).toBe(1);
    expect(copy.trace_id).toBe(body(message.payload).trace_id);
    expect(copy.meta).toEqual(body(message.payload).meta);
  });

  it('counts from the reconciled attempts: bq-attempts "1" fails again → copy with attempts 2', () => {
    const settlement = decide(valid({ 'bq-attempts': '1' }), failed());
    expect(settlement).toMatchObject({ action: 'retry', attempt: 2 });
  });

  it('dead-letters at the cap with reason failed, counted attempts and lang node (54, 55, 56, 69)', () => {
    const envelope = envelopeOf('urn:babel:orders:created', { order_id: 1, big: 1 });
    const message = valid({ 'bq-attempts': '2', 'bq-job': 'urn:babel:orders:created', extra: 'kept' }, envelope);
    const settlement = decide(message, failed(new RangeError('gateway timeout')));
    expect(settlement.action).toBe('dead-letter');
    if (settlement.action !== 'dead-letter') return;
    expect(settlement.reason).toBe('failed');
    const record = body(settlement.record.data);
    expect(record.attempts).toBe(3);
    expect(record.dead_letter).toEqual({
      reason: 'failed',
      error: 'gateway timeout',
      exception: 'RangeError',
      failed_at: NOW,
      original_queue: 'orders',
      attempts: 3,
      lang: 'node',
    });
    expect(Object.keys(record.dead_letter)).toEqual([
      'reason',
      'error',
      'exception',
      'failed_at',
      'original_queue',
      'attempts',
      'lang',
    ]);
    const original = body(message.payload);
    expect(record.job).toBe(original.job);
    expect(record.trace_id).toBe(original.trace_id);
    expect(record.data).toEqual(original.data);
    expect(record.meta).toEqual(original.meta);
    expect(settlement.record.properties).toMatchObject({
      ...message.properties,
      'bq-attempts': '3',
      'bq-dead-letter-reason': 'failed',
      'bq-dead-letter-attempts': '3',
      'bq-dead-letter-original-queue': 'orders',
      'bq-dead-letter-failed-at': String(NOW),
      'bq-dead-letter-lang': 'node',
    });
  });

  it('falls back to the bare topic name when meta.queue is empty (69)', () => {
    const envelope = envelopeOf();
    envelope.meta.queue = '';
    const settlement = decide(valid({ 'bq-attempts': '2' }, envelope), failed());
    if (settlement.action !== 'dead-letter') throw new Error(settlement.action);
    expect(body(settlement.record.data).dead_letter.original_queue).toBe('orders');
  });

  it('records the topic consumed as bq-dead-letter-topic; a publisher cannot set it or any bq-dead-letter-*', () => {
    const envelope = envelopeOf();
    envelope.meta.queue = 'persistent://other-tenant/finance/payments';
    const forged = {
      'bq-attempts': '2',
      'bq-dead-letter-topic': 'persistent://other-tenant/finance/payments',
      'bq-dead-letter-error': 'forged',
    };
    const settlement = decide(valid(forged, envelope), failed(new Error('')));
    if (settlement.action !== 'dead-letter') throw new Error(settlement.action);
    expect(settlement.record.properties['bq-dead-letter-topic']).toBe(TOPIC);
    expect(settlement.record.properties['bq-dead-letter-error']).toBeUndefined();
    // The body's original_queue stays what the contract says (meta.queue): redrive does not trust it.
    expect(body(settlement.record.data).dead_letter.original_queue).toBe('persistent://other-tenant/finance/payments');

    const partition = decideSettlement(
      { ...valid(forged), topic: `${TOPIC}-partition-2` },
      inspect(valid(forged)),
      failed(),
      policy(),
    );
    if (partition.action !== 'dead-letter') throw new Error(partition.action);
    expect(partition.record.properties['bq-dead-letter-topic']).toBe(TOPIC);

    const poison = decide(inbound(Buffer.from('not json'), forged), handled);
    if (poison.action !== 'dead-letter') throw new Error(poison.action);
    expect(poison.record.properties['bq-dead-letter-topic']).toBe(TOPIC);
    expect(poison.record.properties['bq-dead-letter-error']).not.toBe('forged');
  });

  it('acknowledges, drops and warns at the cap without a dead-letter destination (58)', () => {
    const settlement = decide(valid({ 'bq-attempts': '2' }), failed(), policy({ deadLetter: false }));
    expect(settlement.action).toBe('drop');
    if (settlement.action === 'drop') expect(settlement.warning).toMatch(/dropped/);
  });

  it('releases a last attempt instead of dead-lettering it while the circuit breaker is open', () => {
    const last = valid({ 'bq-attempts': '2' });
    const held = policy({ holdLastAttempt: true });
    expect(decide(last, failed(), held)).toMatchObject({
      action: 'nack',
      why: expect.stringMatching(/circuit breaker/),
    });
    expect(decide(last, failed(), { ...held, deadLetter: false }).action).toBe('nack');
    // Earlier attempts retry as usual; the message's own fault and a key's lane are not held.
    expect(decide(valid(), failed(), held).action).toBe('retry');
    expect(decide(last, { ...failed(), retriable: false } as Outcome, held).action).toBe('dead-letter');
    expect(decide(last, failed(), { ...held, retryBy: 'in-place' }).action).toBe('dead-letter');
  });

  it('goes straight to the cap with maxAttempts 1 (59)', () => {
    expect(decide(valid(), failed(), policy({ maxAttempts: 1 })).action).toBe('dead-letter');
    expect(decide(valid(), failed(), policy({ maxAttempts: 1, deadLetter: false })).action).toBe('drop');
  });

  it('retries an unknown URN and dead-letters it at the cap with reason unknown_urn (60)', () => {
    expect(decide(valid(), unknownUrn).action).toBe('retry');
    const settlement = decide(valid({ 'bq-attempts': '2' }), unknownUrn);
    if (settlement.action !== 'dead-letter') throw new Error(settlement.action);
    expect(settlement.reason).toBe('unknown_urn');
    expect(body(settlement.record.data).dead_letter.reason).toBe('unknown_urn');
  });

  it('writes poison to the dead-letter topic at once, bytes unchanged, properties kept', () => {
    const payload = Buffer.from([0x7b, 0xff, 0x00, 0x7d]);
    const properties = { 'bq-job': 'urn:babel:orders:created', 'bq-attempts': '0', custom: 'x' };
    const settlement = decide(inbound(payload, properties), handled);
    if (settlement.action !== 'dead-letter') throw new Error(settlement.action);
    expect(settlement.reason).toBe('poison');
    expect(settlement.record.data.equals(payload)).toBe(true);
    expect(settlement.record.properties).toMatchObject({
      ...properties,
      'bq-dead-letter-reason': 'poison',
      'bq-dead-letter-attempts': '1',
      'bq-dead-letter-original-queue': 'orders',
      'bq-dead-letter-failed-at': String(NOW),
      'bq-dead-letter-lang': 'node',
    });
    expect(settlement.record.properties['bq-dead-letter-error']).toMatch(/UTF-8/);
  });

  it('takes the bounded path for poison without a dead-letter destination', () => {
    const payload = Buffer.from('not json');
    const first = decide(inbound(payload, { 'bq-job': 'urn:x' }), handled, policy({ deadLetter: false }));
    if (first.action !== 'retry') throw new Error(first.action);
    expect(first.copy.data.equals(payload)).toBe(true);
    expect(first.copy.properties).toEqual({ 'bq-job': 'urn:x', 'bq-attempts': '1' });
    const last = decide(inbound(payload, { 'bq-attempts': '2' }), handled, policy({ deadLetter: false }));
    expect(last.action).toBe('drop');
  });

  it('negatively acknowledges instead of re-publishing when retrying by nack (64)', () => {
    expect(decide(valid(), failed(), policy({ retryBy: 'nack' })).action).toBe('nack');
    expect(decide(inbound(Buffer.from('x'), {}), handled, policy({ retryBy: 'nack', deadLetter: false })).action).toBe(
      'nack',
    );
  });

  it('never acknowledges a failure below the cap without writing a copy first', () => {
    for (const attempts of ['0', '1']) {
      const action = decide(valid({ 'bq-attempts': attempts }), failed()).action;
      expect(action).toBe('retry');
    }
  });

  it('keeps exact numbers and unknown keys in retry and dead-letter copies', () => {
    const raw =
      '{"job":"urn:babel:n","trace_id":"t","data":{"big":12345678901234567890,"f":1.0,"d":0.1000000000000000055511151231257827},' +
      '"meta":{"id":"i","queue":"orders","lang":"go","schema_version":1,"created_at":1,"x-extra":{"a":[1]}},"attempts":0,"future":[true]}';
    const message = inbound(Buffer.from(raw), { 'bq-job': 'urn:babel:n' });
    const retry = decide(message, failed());
    if (retry.action !== 'retry') throw new Error(retry.action);
    const text = retry.copy.data.toString();
    expect(text).toContain('"big":12345678901234567890');
    expect(text).toContain('"f":1.0');
    expect(text).toContain('"d":0.1000000000000000055511151231257827');
    expect(text).toContain('"x-extra":{"a":[1]}');
    expect(text).toContain('"future":[true]');
    expect(text).toContain('"attempts":1');
    const dead = decide(message, failed(), policy({ maxAttempts: 1 }));
    if (dead.action !== 'dead-letter') throw new Error(dead.action);
    expect(dead.record.data.toString()).toContain('"big":12345678901234567890');
  });

  it('re-encodes the copy with the codec (the body stays a valid envelope)', () => {
    const settlement = decide(valid(), failed());
    if (settlement.action !== 'retry') throw new Error(settlement.action);
    const decoded = EnvelopeCodec.decode(settlement.copy.data);
    expect(EnvelopeCodec.accepts(decoded.envelope)).toBe(true);
  });
});
