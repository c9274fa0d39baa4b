// The pure parts of the dead-letter tools: selectors, topic names, CLI arguments, formatting, admin URLs.
import { parseRequest } from '../../../lib/cli/arguments.js';
import { formatAge, recordDetail } from '../../../lib/cli/format.js';
import { checkDashboardOptions } from '../../../lib/dashboard/dashboard-options.js';
import type { DeadLetterView } from '../../../lib/redrive/dead-letter-view.js';
import { DeadLetterUsageError } from '../../../lib/redrive/errors.js';
import { checkSelection, isSelected, parseDuration } from '../../../lib/redrive/selection.js';
import { resolveTarget } from '../../../lib/redrive/reset.js';
import { adminUrlFor, topicExists } from '../../../lib/redrive/topic-exists.js';
import { deadLetterTopicName } from '../../../lib/redrive/topic-name.js';

const view = (over: Partial<DeadLetterView> = {}): DeadLetterView => ({
  messageId: '(1,2,-1,-1)',
  id: 'm-1',
  urn: 'urn:babel:orders:created',
  reason: 'failed',
  attempts: 3,
  error: 'boom',
  exception: 'Error',
  originalQueue: 'orders',
  consumedTopic: null,
  failedAt: 0,
  ageMs: 3_600_000,
  body: '{"job":"urn:babel:orders:created","data":{"n":12345678901234567890}}',
  properties: { 'bq-job': 'urn:babel:orders:created' },
  invalid: null,
  ...over,
});

test('selectors: every given one must match; unknown reasons and blanks are refused', () => {
  expect(isSelected(view(), {})).toBe(true);
  expect(isSelected(view(), { reason: 'failed', urn: ' urn:babel:orders:created ' })).toBe(true);
  expect(isSelected(view(), { reason: 'poison' })).toBe(false);
  expect(isSelected(view(), { ids: ['x', 'm-1'], messageIds: ['(1,2,-1,-1)'] })).toBe(true);
  expect(isSelected(view(), { olderThanMs: 3_600_001 })).toBe(false);
  expect(isSelected(view(), { newerThanMs: 60_000 })).toBe(false);
  expect(() => checkSelection({ reason: 'bogus' })).toThrow(
    new DeadLetterUsageError('unknown reason "bogus": use one of failed, unknown_urn, poison'),
  );
  expect(() => checkSelection({ urn: ' ' })).toThrow(DeadLetterUsageError);
  expect(() => checkSelection({ ids: [''] })).toThrow(DeadLetterUsageError);
  expect(() => checkSelection({ olderThanMs: -1 })).toThrow(DeadLetterUsageError);
});

test('durations', () => {
  expect(parseDuration('90')).toBe(90_000);
  expect(parseDuration('15m')).toBe(900_000);
  expect(parseDuration(' 2h ')).toBe(7_200_000);
  expect(parseDuration('7d')).toBe(604_800_000);
  expect(parseDuration('250ms')).toBe(250);
  expect(() => parseDuration('soon')).toThrow(/not a duration/);
  expect(formatAge(0)).toBe('0s');
  expect(formatAge(3_723_000)).toBe('1h 2m');
  expect(formatAge(90_061_000)).toBe('1d 1h');
  expect(formatAge(3_600_000)).toBe('1h 0m');
});

test('topic names: one rule for both clients', () => {
  expect(deadLetterTopicName('orders.dlq')).toBe('persistent://public/default/orders.dlq');
  expect(deadLetterTopicName(' acme/billing/orders.dlq ')).toBe('persistent://acme/billing/orders.dlq');
  for (const bad of ['', '   ', 'persistent://public/default/bad//x.dlq', 'a/b', 'kafka://t/n/x'])
    expect(() => deadLetterTopicName(bad)).toThrow(DeadLetterUsageError);
});

test('CLI arguments are checked before anything connects', () => {
  const request = parseRequest('redrive', ['--topic', 'orders.dlq', '--reason', 'failed', '--max', '5'], {});
  expect(request).toMatchObject({
    topic: 'persistent://public/default/orders.dlq',
    selection: { reason: 'failed' },
    max: 5,
    serviceUrl: 'pulsar://127.0.0.1:6650',
  });
  expect(parseRequest('list', ['--help'], {}).help).toBe(true);
  expect(parseRequest('peek', ['-h'], {}).help).toBe(true);
  expect(
    parseRequest('stats', ['--topic', 'x.dlq'], { BABELQUEUE_PULSAR_ADMIN_URL: 'http://admin:8080' }),
  ).toMatchObject({ adminUrl: 'http://admin:8080' });
  expect(() => parseRequest('list', [], {})).toThrow(/--topic is required/);
  expect(() => parseRequest('list', ['--topic', 'x', '--to', 'y'], {})).toThrow(/Unknown option '--to'/);
  expect(() => parseRequest('peek', ['--topic', 'x', '--limit', '0'], {})).toThrow(/--limit must be a positive/);
  expect(() => parseRequest('redrive', ['--topic', 'x', '--to', 'a//b'], {})).toThrow(DeadLetterUsageError);
  expect(() => parseRequest('list', ['--topic', 'x', '--service-url', 'nope'], {})).toThrow(/is not a URL/);
});

test('peek shows the body indented with its numbers exactly as written', () => {
  const text = recordDetail(view());
  expect(text).toContain('"n": 12345678901234567890');
  expect(text).toContain('  "bq-job": "urn:babel:orders:created"');
  expect(recordDetail(view({ body: 'not json {', invalid: 'not JSON' }))).toMatch(
    /not an envelope: "not JSON"[\s\S]*"not json \{"$/,
  );
});

test('the admin URL follows the service URL; existence asks the admin API and never creates', async () => {
  expect(adminUrlFor('pulsar://broker:6650')).toBe('http://broker:8080');
  expect(adminUrlFor('pulsar+ssl://broker:6651')).toBe('https://broker:8443');
  expect(adminUrlFor('http://proxy:8080/')).toBe('http://proxy:8080');
  expect(adminUrlFor('wss://proxy')).toBe('https://proxy');
  const asked: string[] = [];
  const answer = (status: number, body: unknown = {}) =>
    (async (url: string | URL | Request) => {
      asked.push(String(url));
      return new Response(JSON.stringify(body), { status });
    }) as typeof fetch;
  await expect(topicExists('persistent://t/n/x.dlq', { adminUrl: 'http://a', fetch: answer(404) })).resolves.toBe(
    false,
  );
  expect(asked).toEqual([
    'http://a/admin/v2/persistent/t/n/x.dlq/partitions',
    'http://a/admin/v2/persistent/t/n/x.dlq/stats',
  ]);
  await expect(
    topicExists('persistent://t/n/x.dlq', { adminUrl: 'http://a', fetch: answer(200, { partitions: 3 }) }),
  ).resolves.toBe(true);
  await expect(topicExists('persistent://t/n/x.dlq', { adminUrl: 'http://a', fetch: answer(503) })).rejects.toThrow(
    /answered HTTP 503/,
  );
  await expect(topicExists('persistent://t/n/x.dlq', { adminUrl: 'http://127.0.0.1:1' })).rejects.toThrow(
    /cannot reach/,
  );
});

test('the dashboard needs topics and a guard, unless the app is private', () => {
  expect(() => checkDashboardOptions({ topics: ['a.dlq'] })).toThrow(/refuses to start without a guard/);
  expect(() => checkDashboardOptions({ topics: ['a.dlq'], private: true })).not.toThrow();
  expect(() => checkDashboardOptions({ topics: ['a.dlq'], guard: { canActivate: () => true } })).not.toThrow();
  expect(() => checkDashboardOptions({ topics: [], private: true })).toThrow(/topics/);
  expect(() => checkDashboardOptions({ topics: ['a.dlq'], private: true, path: '../x?' })).toThrow(/not a URL path/);
});

test('a redrive target: bare names in the DLQ namespace, tenant/namespace/topic and full names as they are', () => {
  const dlq = 'persistent://acme/billing/orders.dlq';
  expect(resolveTarget('orders', dlq)).toBe('persistent://acme/billing/orders');
  expect(resolveTarget('other/ns/orders', dlq)).toBe('persistent://other/ns/orders');
  expect(resolveTarget('non-persistent://a/b/c', dlq)).toBe('non-persistent://a/b/c');
});
