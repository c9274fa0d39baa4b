// The outbox relay's pure decisions: whose fault a failure is, when a row is parked, when an outage is reported.
import { BabelQueueError } from '../../../lib/envelope/index.js';
import { outboxBackoffMs } from '../../../lib/outbox/backoff.js';
import { decideFailedRow, OutboxRowError, outboxFailureCause } from '../../../lib/outbox/failure.js';
import { OutageWatch } from '../../../lib/outbox/outage-watch.js';
import { checkedRowProperties } from '../../../lib/outbox/row-check.js';
import { outboxMigrationSql, outboxParkingMigrationSql } from '../../../lib/outbox/table.js';
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import { isNoSuchTopic } from '../../../lib/pulsar/client-errors.js';
import { PulsarWebSocketError } from '../../../lib/pulsar/websocket/index.js';

describe('outboxFailureCause', () => {
  it.each([
    ['a row check', new OutboxRowError('the row is not an envelope')],
    ['a native MessageTooBig', new Error('Failed to send message: MessageTooBig')],
    ['a WebSocket MessageTooBig', Object.assign(new Error('too big'), { code: 'MessageTooBig' })],
    [
      'a native TopicNotFound',
      new BabelQueueError('cannot create a producer: Failed to create producer: TopicNotFound'),
    ],
    [
      'a WebSocket 404 upgrade',
      Object.assign(new Error('HTTP 404'), {
        code: 'HandshakeRejected',
        status: 404,
        brokerMessage: 'Failed to create producer/consumer: Namespace not found',
      }),
    ],
  ])("%s is the row's fault", (_name, error) => expect(outboxFailureCause(error)).toBe('row'));

  it.each([
    ['a refused connection', new Error('connect ECONNREFUSED 127.0.0.1:6650')],
    ['a time-out', new BabelQueueError('publishing outbox row x did not finish within 1000 ms (TimeOut)')],
    ['a lost connection', Object.assign(new Error('connection lost'), { code: 'ConnectionClosed' })],
    ['a refused role (403)', Object.assign(new Error('not authorized'), { code: 'HandshakeRejected', status: 403 })],
    ['a WebSocket 500', Object.assign(new Error('internal'), { code: 'HandshakeRejected', status: 500 })],
    ['anything else', 'a string'],
  ])('%s is the broker', (_name, error) => expect(outboxFailureCause(error)).toBe('broker'));

  it('reads a WebSocket error of the client itself: a 404 only when the broker says what is missing', () => {
    const refused = (status: number, brokerMessage: string) =>
      new PulsarWebSocketError('Broker rejected producer', {
        code: 'HandshakeRejected',
        status,
        topic: 't',
        brokerMessage,
      });
    const namespace = 'Failed to create producer/consumer: {"errorMsg":"Namespace not found","reqId":1}';
    expect(isNoSuchTopic(refused(404, namespace))).toBe(true);
    expect(isNoSuchTopic(refused(404, 'Topic persistent://a/b/c does not exist'))).toBe(true);
    expect(isNoSuchTopic(refused(404, 'Not Found'))).toBe(false); // no WebSocket service at that address
    expect(isNoSuchTopic(refused(503, namespace))).toBe(false);
  });
});

describe('decideFailedRow', () => {
  it('parks a row at fault on its parkAfterAttempts-th attempt, and retries it before', () => {
    expect(decideFailedRow('row', 0, 3)).toEqual({ park: false, retryInMs: outboxBackoffMs(0) });
    expect(decideFailedRow('row', 1, 3)).toEqual({ park: false, retryInMs: outboxBackoffMs(1) });
    expect(decideFailedRow('row', 2, 3)).toEqual({ park: true });
    expect(decideFailedRow('row', 40, 3)).toEqual({ park: true });
    expect(decideFailedRow('row', 0, 1)).toEqual({ park: true });
  });

  it('never parks for the broker, however many attempts failed', () => {
    for (const attempts of [0, 4, 5, 1000]) expect(decideFailedRow('broker', attempts, 1).park).toBe(false);
    expect(decideFailedRow('broker', 1000, 1)).toEqual({ park: false, retryInMs: 5000 });
  });
});

describe('OutageWatch', () => {
  it('reports an outage once when it starts and once when a pass confirms it ended, with its counts', () => {
    const watch = new OutageWatch(10_000);
    expect(watch.succeeded(0, false)).toBeNull();
    expect(watch.failed(1000, 100, 'ECONNREFUSED', ['1', '2'])).toEqual({ kind: 'down', error: 'ECONNREFUSED' });
    expect(watch.failingSince).toBe(1000);
    for (let at = 1500; at < 60_000; at += 500) expect(watch.failed(at, 1, 'again', ['1'])).toBeNull();
    expect(watch.failed(61_000, 1, 'again', ['3'])).toBeNull();
    // A pass without failures that published nothing that had failed: not yet proven.
    expect(watch.succeeded(62_000, false)).toBeNull();
    expect(watch.firstError).toBe('ECONNREFUSED');
    expect(watch.succeeded(62_500, true)).toEqual({
      kind: 'up',
      downForMs: 61_500,
      failedAttempts: 100 + 117 + 1,
      rows: 3,
    });
    expect(watch.failingSince).toBeNull();
    expect(watch.succeeded(63_000, true)).toBeNull();
  });

  it('ends an outage after the quiet period without a failure, confirmed or not', () => {
    const watch = new OutageWatch(10_000);
    watch.failed(0, 1, 'x');
    expect(watch.succeeded(9_999, false)).toBeNull();
    expect(watch.succeeded(10_000, false)).toMatchObject({ kind: 'up', downForMs: 10_000, failedAttempts: 1 });
    expect(watch.failed(20_000, 1, 'y')).toEqual({ kind: 'down', error: 'y' });
  });
});

describe('checkedRowProperties', () => {
  const envelope = EnvelopeCodec.make('urn:babel:orders:created', { n: 1 }, { queue: 'orders' });
  it("reads the bq-* properties from a body the consumer's codec accepts", () => {
    expect(checkedRowProperties(EnvelopeCodec.encodeToBuffer(envelope), 'orders')).toMatchObject({
      'bq-job': 'urn:babel:orders:created',
      'bq-message-id': envelope.meta.id,
      'bq-attempts': '0',
    });
  });
  it.each([
    ['{"hello":"world"}', /no URN/],
    ['not json', /not valid JSON/],
    ['[1]', /a JSON array, not an object/],
    ['{"job":"urn:babel:x","trace_id":"t","data":{},"meta":{"schema_version":2},"attempts":0}', /schema_version/],
  ])('refuses the body %s', (body, message) => {
    expect(() => checkedRowProperties(Buffer.from(body), 'orders')).toThrow(OutboxRowError);
    expect(() => checkedRowProperties(Buffer.from(body), 'orders')).toThrow(message);
  });
  it('refuses a topic that is not a topic name', () => {
    expect(() => checkedRowProperties(EnvelopeCodec.encodeToBuffer(envelope), 'ftp://x/y/z')).toThrow(
      /is not a topic name/,
    );
  });
});

describe('the migration', () => {
  it('creates parked_at, and adds it to a table created before it existed', () => {
    const sql = outboxMigrationSql('app.outbox');
    expect(sql).toContain('  parked_at timestamptz\n);');
    expect(sql).toContain(outboxParkingMigrationSql('app.outbox'));
    expect(outboxParkingMigrationSql('app.outbox')).toBe(
      'ALTER TABLE app.outbox ADD COLUMN IF NOT EXISTS parked_at timestamptz;',
    );
    expect(sql).toContain(
      'CREATE INDEX IF NOT EXISTS app_outbox_parked ON app.outbox (seq) WHERE parked_at IS NOT NULL;',
    );
  });
});
