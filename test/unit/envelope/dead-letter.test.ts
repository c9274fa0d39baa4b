// docs/contract.md#dead-letter-records: the dead-letter record, its properties and the bare topic name.
import { EnvelopeCodec, bareTopicName, deadLetterProperties, deadLetterRecord } from '../../../lib/envelope/index.js';
import type { Envelope } from '../../../lib/envelope/index.js';

const wire =
  '{"job":"urn:babel:orders:created","trace_id":"t-1","data":{"amount":12345678901234567890,"rate":1.0},' +
  '"meta":{"id":"i","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,"vendor":{"a":[1.50]}},' +
  '"attempts":1,"extra_top":{"x":2.0}}';
const decoded = (): Envelope => {
  const env = EnvelopeCodec.decode(wire).envelope;
  if (!EnvelopeCodec.accepts(env)) throw new Error('fixture not accepted');
  return env;
};

class GatewayTimeout extends Error {
  override name = 'GatewayTimeout';
}

describe('deadLetterRecord', () => {
  it('appends the block in the emitted key order, with attempts = the counted attempt', () => {
    const record = deadLetterRecord(decoded(), {
      reason: 'failed',
      error: new GatewayTimeout('Payment gateway timeout'),
      attempts: 3,
      originalQueue: 'orders-topic',
      failedAt: 1749132730000,
    });
    expect(record.attempts).toBe(3);
    expect(record.dead_letter).toStrictEqual({
      reason: 'failed',
      error: 'Payment gateway timeout',
      exception: 'GatewayTimeout',
      failed_at: 1749132730000,
      original_queue: 'orders',
      attempts: 3,
      lang: 'node',
    });
    expect(Object.keys(record.dead_letter!)).toEqual([
      'reason',
      'error',
      'exception',
      'failed_at',
      'original_queue',
      'attempts',
      'lang',
    ]);
  });

  it('keeps job, trace_id, data, meta and unknown keys verbatim, numbers exact (55)', () => {
    const record = deadLetterRecord(decoded(), {
      reason: 'unknown_urn',
      error: null,
      attempts: 3,
      originalQueue: 'q',
      failedAt: 5,
    });
    const text = EnvelopeCodec.encode(record);
    expect(text).toBe(
      wire.replace(
        '"attempts":1,"extra_top":{"x":2.0}}',
        '"attempts":3,"dead_letter":{"reason":"unknown_urn","error":null,"exception":null,"failed_at":5,"original_queue":"orders","attempts":3,"lang":"node"},"extra_top":{"x":2.0}}',
      ),
    );
    expect(EnvelopeCodec.accepts(EnvelopeCodec.decode(text).envelope)).toBe(true);
  });

  it('falls back to the given queue when meta.queue is empty or not a string', () => {
    const env = decoded();
    for (const queue of ['', undefined, 7]) {
      const copy = { ...env, meta: { ...env.meta, queue } } as unknown as Envelope;
      expect(
        deadLetterRecord(copy, { reason: 'failed', error: null, attempts: 1, originalQueue: 'orders-topic' })
          .dead_letter!.original_queue,
      ).toBe('orders-topic');
    }
  });

  it('stamps failed_at with Date.now() when not given (integer ms)', () => {
    const before = Date.now();
    const record = deadLetterRecord(decoded(), {
      reason: 'failed',
      error: new Error('x'),
      attempts: 1,
      originalQueue: 'q',
    });
    expect(Number.isInteger(record.dead_letter!.failed_at)).toBe(true);
    expect(record.dead_letter!.failed_at).toBeGreaterThanOrEqual(before);
    expect(record.dead_letter!.failed_at).toBeLessThanOrEqual(Date.now());
  });

  it.each([
    ['an Error', new TypeError('bad'), 'bad', 'TypeError'],
    ['a thrown string', 'boom', 'boom', null],
    ['a number', 42, '42', null],
    ['nothing', undefined, null, null],
    ['null', null, null, null],
    ['an error-like object', { name: 'HttpError', message: 'nope' }, 'nope', 'HttpError'],
    ['an Error with an empty message', new Error(''), '', 'Error'],
  ])('reports %s as error/exception', (_what, error, message, name) => {
    const block = deadLetterRecord(decoded(), {
      reason: 'failed',
      error,
      attempts: 1,
      originalQueue: 'q',
      failedAt: 1,
    }).dead_letter!;
    expect(block.error).toBe(message);
    expect(block.exception).toBe(name);
  });

  it('replaces an earlier dead_letter block and leaves the input untouched', () => {
    const env = decoded();
    const first = deadLetterRecord(env, { reason: 'failed', error: 'a', attempts: 1, originalQueue: 'q', failedAt: 1 });
    const second = deadLetterRecord(first, {
      reason: 'unknown_urn',
      error: 'b',
      attempts: 2,
      originalQueue: 'q',
      failedAt: 2,
    });
    expect(second.dead_letter!.reason).toBe('unknown_urn');
    expect(first.dead_letter!.reason).toBe('failed');
    expect(env.dead_letter).toBeUndefined();
    expect(env.attempts).toBe(1);
  });

  it('refuses the poison reason (D1: a poison record keeps the original bytes)', () => {
    expect(() =>
      deadLetterRecord(decoded(), { reason: 'poison' as 'failed', error: null, attempts: 1, originalQueue: 'q' }),
    ).toThrow(/reason/);
  });
});

describe('deadLetterProperties', () => {
  it('gives the six bq-dead-letter-* properties as strings', () => {
    expect(
      deadLetterProperties({
        reason: 'poison',
        error: 'payload is not valid UTF-8 (byte 3)',
        attempts: 1,
        originalQueue: 'orders',
        failedAt: 1749132730000,
      }),
    ).toStrictEqual({
      'bq-dead-letter-reason': 'poison',
      'bq-dead-letter-error': 'payload is not valid UTF-8 (byte 3)',
      'bq-dead-letter-attempts': '1',
      'bq-dead-letter-original-queue': 'orders',
      'bq-dead-letter-failed-at': '1749132730000',
      'bq-dead-letter-lang': 'node',
    });
  });

  it('takes the message of an Error and leaves out an empty or absent one', () => {
    expect(
      deadLetterProperties({
        reason: 'failed',
        error: new Error('boom'),
        attempts: 3,
        originalQueue: 'q',
        failedAt: 1,
      })['bq-dead-letter-error'],
    ).toBe('boom');
    for (const error of [new Error(''), '', null, undefined]) {
      expect(
        deadLetterProperties({ reason: 'failed', error, attempts: 3, originalQueue: 'q', failedAt: 1 }),
      ).not.toHaveProperty('bq-dead-letter-error');
    }
  });
});

describe('bareTopicName', () => {
  it.each([
    ['persistent://public/default/orders', 'orders'],
    ['non-persistent://tenant/ns/orders.v2', 'orders.v2'],
    ['orders', 'orders'],
    ['public/default/orders', 'orders'],
    ['persistent://public/default/orders/', 'orders'],
    ['persistent://public/default/orders-partition-0', 'orders-partition-0'],
    ['', ''],
  ])('%j → %j', (topic, name) => {
    expect(bareTopicName(topic)).toBe(name);
  });
});
