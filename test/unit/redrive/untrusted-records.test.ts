// A dead-letter record is written by whoever could publish: what the tools print of it, count of it and do with
// it must not be the record's to decide. Pure parts (the broker paths are in test/integration/redrive).
import { recordDetail, recordLine, progressLine, statsLines } from '../../../lib/cli/format.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { checkDashboardOptions } from '../../../lib/dashboard/dashboard-options.js';
import { requireJson, securityHeaders } from '../../../lib/dashboard/security-headers.js';
import { EnvelopeCodec } from '../../../lib/envelope/index.js';
import type { PulsarMessage, PulsarMessageId } from '../../../lib/pulsar/client-types.js';
import { parseTopic } from '../../../lib/pulsar/topic-name.js';
import { statsOf } from '../../../lib/redrive/browse.js';
import { decodeDeadLetter } from '../../../lib/redrive/dead-letter-view.js';
import { DeadLetterUsageError } from '../../../lib/redrive/errors.js';
import { redriveTargets, refusalOf, topicOfDeadLetterTopic } from '../../../lib/redrive/targets.js';
import { deadLetterTopicName } from '../../../lib/redrive/topic-name.js';

/** Any C0 (but the layout's line feed), DEL or C1 character. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u;
const ESCAPES = '\u001b[31m\u001b]0;pwned\u0007\u001b[2J\u001b[H\u009b';

function message(data: string, properties: Record<string, string>, publishedAt = 1_700_000_000_000): PulsarMessage {
  const id: PulsarMessageId = { toString: () => '(7,1,-1,-1)' } as PulsarMessageId;
  return {
    getData: () => Buffer.from(data, 'utf8'),
    getProperties: () => properties,
    getRedeliveryCount: () => 0,
    getMessageId: () => id,
    getTopicName: () => 'persistent://public/default/orders.dlq',
    getPublishTimestamp: () => publishedAt,
    getPartitionKey: () => '',
  };
}

function hostileRecord(failedAt: unknown = 1_700_000_000_000): PulsarMessage {
  const envelope = EnvelopeCodec.make(
    'urn:babel:orders:created' + ESCAPES,
    { note: 'x' + ESCAPES },
    {
      queue: 'orders',
      id: 'm-1\n[Nest] 1  - ERROR [Auth] forged' + ESCAPES,
    },
  );
  const body = {
    ...envelope,
    dead_letter: {
      reason: 'failed',
      error: 'boom' + ESCAPES,
      exception: 'Error' + ESCAPES,
      failed_at: failedAt,
      original_queue: 'orders' + ESCAPES,
      attempts: 3,
      lang: 'node',
    },
  };
  return message(JSON.stringify(body), { 'bq-job': envelope.job, ['x-prop' + ESCAPES]: 'v' + ESCAPES });
}

test('list, peek and redrive progress print every record value quoted, with no raw control character', () => {
  const { view } = decodeDeadLetter(hostileRecord(), 1_700_000_060_000);
  const line = recordLine(view);
  expect(line).not.toMatch(RAW_CONTROL);
  expect(line).not.toContain('\n');
  expect(line).toContain('id="m-1\\n[Nest] 1  - ERROR [Auth] forged\\x1b[31m');
  expect(line).toContain('error="boom\\x1b[31m\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x9b"');

  const detail = recordDetail(view);
  expect(detail).not.toMatch(RAW_CONTROL);
  expect(detail).toContain('"x-prop\\x1b[31m');
  // Only the layout breaks lines: the forged id stays on its own line.
  expect(detail.split('\n').some((l) => l.startsWith('[Nest]'))).toBe(false);

  const poison = decodeDeadLetter(
    message(`not json ${ESCAPES}\nERROR forged`, { 'bq-dead-letter-reason': 'poison' }),
  ).view;
  const poisonDetail = recordDetail(poison);
  expect(poisonDetail).not.toMatch(RAW_CONTROL);
  expect(poisonDetail.split('\n').some((l) => l.startsWith('ERROR forged'))).toBe(false);

  const progress = progressLine({
    outcome: 'refused',
    dlqMessageId: '(7,1,-1,-1)',
    id: view.id,
    traceId: '',
    urn: view.urn,
    reason: view.reason,
    to: 'persistent://other/finance/payments' + ESCAPES,
    bypassed: false,
    detail: `refused: it names persistent://other/finance/payments${ESCAPES}`,
  });
  expect(progress).not.toMatch(RAW_CONTROL);
  expect(progress).not.toContain('\n');
  expect(progress).toMatch(/^REFUSED/);
});

test('stats count a reason or URN named constructor or __proto__ like any other, and print them quoted', () => {
  const views = ['constructor', '__proto__', 'constructor', 'toString' + ESCAPES].map((reason) => ({
    ...decodeDeadLetter(hostileRecord()).view,
    reason,
    urn: reason,
  }));
  const stats = statsOf({ topic: 'persistent://public/default/orders.dlq', read: 4, records: views });
  expect(stats.byReason['constructor']).toBe(2);
  expect(stats.byReason['__proto__']).toBe(1);
  expect(Object.keys(stats.byUrn).sort()).toEqual(['__proto__', 'constructor', 'toString' + ESCAPES].sort());
  expect(JSON.parse(JSON.stringify(stats)).byReason).toEqual({
    constructor: 2,
    ['__proto__']: 1,
    ['toString' + ESCAPES]: 1,
  });
  const lines = statsLines(stats, 1_700_000_060_000);
  expect(lines.join('\n')).not.toMatch(RAW_CONTROL);
  expect(lines).toContain('       2  "constructor"');
});

test('a failed_at no Date can hold falls back to the publish time: peek and the view still work', () => {
  for (const bad of [1e300, -1, 1.5, 9e15, '1e300', Number.MAX_VALUE]) {
    const { view } = decodeDeadLetter(hostileRecord(bad), 1_700_000_060_000);
    expect(view.failedAt).toBe(1_700_000_000_000);
    expect(view.ageMs).toBe(60_000);
    expect(() => recordDetail(view)).not.toThrow();
  }
  const props = message('not json', { 'bq-dead-letter-failed-at': '1e300' }, 5);
  expect(decodeDeadLetter(props, 10).view.failedAt).toBe(5);
  expect(decodeDeadLetter(hostileRecord(1_600_000_000_000)).view.failedAt).toBe(1_600_000_000_000);
});

test('redrive targets: by default only <topic> of <topic>.dlq; an allowlist or a --to replaces that', () => {
  const dlq = 'persistent://acme/billing/orders.dlq';
  expect(topicOfDeadLetterTopic(dlq)).toBe('persistent://acme/billing/orders');
  const byDefault = redriveTargets(dlq, {});
  expect(refusalOf('persistent://acme/billing/orders', dlq, byDefault)).toBeNull();
  expect(refusalOf('persistent://other-tenant/finance/payments', dlq, byDefault)).toMatch(
    /^refused: it names persistent:\/\/other-tenant\/finance\/payments, but a redrive from persistent:\/\/acme\/billing\/orders\.dlq writes only to persistent:\/\/acme\/billing\/orders/,
  );
  const listed = redriveTargets(dlq, { allowedTargets: ['payments', 'acme/billing/refunds'] });
  expect(refusalOf('persistent://acme/billing/payments', dlq, listed)).toBeNull();
  expect(refusalOf('persistent://acme/billing/refunds', dlq, listed)).toBeNull();
  expect(refusalOf('persistent://acme/billing/orders', dlq, listed)).toMatch(/not one of the allowed targets/);
  const sandbox = redriveTargets(dlq, { to: 'sandbox' });
  expect(sandbox.to).toBe('persistent://acme/billing/sandbox');
  expect(refusalOf('persistent://acme/billing/sandbox', dlq, sandbox)).toBeNull();
  const custom = redriveTargets('persistent://acme/billing/dead-letters', {});
  expect(refusalOf('persistent://acme/billing/orders', 'persistent://acme/billing/dead-letters', custom)).toMatch(
    /not named <topic>\.dlq, so no target is allowed by default/,
  );
  expect(() => redriveTargets(dlq, { allowedTargets: ['../x/y'] })).toThrow(DeadLetterUsageError);
});

test("topic names with '.' or '..' segments are refused where they are parsed", () => {
  for (const name of ['persistent://../../clusters', '../../clusters', 'public/./orders', 'public/default/..', '..'])
    expect(() => parseTopic(name)).toThrow(/is not a name \(a path segment\)/);
  expect(() => deadLetterTopicName('persistent://../../clusters')).toThrow(DeadLetterUsageError);
  expect(parseTopic('tenant.a/ns.b/orders..v2').full).toBe('persistent://tenant.a/ns.b/orders..v2');
});

test('the CLI prints the service and admin URLs without their user info when unreachable', async () => {
  const lines: string[] = [];
  const output = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
  const code = await runCli(
    [
      'list',
      '--topic',
      'orders.dlq',
      '--service-url',
      'http://ops:s3cret@127.0.0.1:9',
      '--admin-url',
      'http://admin:hunter2@127.0.0.1:9',
    ],
    output,
    {},
  );
  expect(code).toBe(3);
  const printed = lines.join('\n');
  expect(printed).toMatch(/cannot reach/);
  expect(printed).not.toMatch(/s3cret|hunter2|ops:|admin:/);
  expect(printed).toContain('http://***@127.0.0.1:9');

  lines.length = 0;
  expect(await runCli(['list', '--topic', 'orders.dlq', '--service-url', 'http://ops:s3cret@[bad'], output, {})).toBe(
    2,
  );
  expect(lines.join('\n')).not.toContain('s3cret');
});

test('dashboard options: frameAncestors cannot inject a directive; bounds and targets are checked at start-up', () => {
  const base = { topics: ['orders.dlq'], private: true };
  expect(() => checkDashboardOptions({ ...base, frameAncestors: "'self'; script-src *" })).toThrow(/frameAncestors/);
  expect(() => checkDashboardOptions({ ...base, frameAncestors: "'self' https://portal.example" })).not.toThrow();
  expect(() => checkDashboardOptions({ ...base, maxRead: 0 })).toThrow(/maxRead must be a whole number/);
  expect(() => checkDashboardOptions({ ...base, pageSize: 1.5 })).toThrow(/pageSize/);
  expect(() => checkDashboardOptions({ ...base, redriveTargets: ['persistent://../../clusters'] })).toThrow(
    /redriveTargets/,
  );
  expect(securityHeaders(undefined)).toMatchObject({
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  });
  expect(securityHeaders("'self'")['x-frame-options']).toBeUndefined();
  expect(securityHeaders("'self'")['content-security-policy']).toContain("frame-ancestors 'self'");
  expect(requireJson('application/json; charset=utf-8')).toBe(true);
  for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonp'])
    expect(requireJson(type)).toBe(false);
});
