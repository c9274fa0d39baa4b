import { BabelHandler } from '../../../lib/index.js';
import {
  inPatternForm,
  matchingTopics,
  namespacePrefix,
  parseTopicPattern,
} from '../../../lib/pulsar/topic-pattern.js';
import { topicListerOf } from '../../../lib/pulsar/topic-lister.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import { PatternWatch } from '../../../lib/nest/server/pattern-watch.js';

const ns = (local: string) => `persistent://public/default/${local}`;

describe('parseTopicPattern', () => {
  it('reads the short, namespaced and full forms, and a RegExp', () => {
    expect(parseTopicPattern('orders-.*', 'p')).toMatchObject({
      tenant: 'public',
      namespace: 'default',
      source: 'orders-.*',
      label: 'persistent://public/default/orders-.*',
    });
    expect(parseTopicPattern('acme/billing/inv(oice|ent)', 'p')).toMatchObject({
      tenant: 'acme',
      namespace: 'billing',
      source: 'inv(oice|ent)',
    });
    expect(parseTopicPattern('non-persistent://acme/live/tick-\\d+', 'p')).toMatchObject({
      domain: 'non-persistent',
      label: 'non-persistent://acme/live/tick-\\d+',
    });
    expect(parseTopicPattern(/persistent:\/\/acme\/eu\/orders-.*/, 'p')).toMatchObject({
      tenant: 'acme',
      namespace: 'eu',
      source: 'orders-.*',
    });
  });

  it.each([
    [42, /p must be a regular expression over the topic names of one namespace/],
    ['  ', /p must be a regular expression/],
    [/orders/i, 'p must be a RegExp without flags (Pulsar matches case-sensitively), got /orders/i'],
    ['acme/orders-.*', /does not name one namespace: Pulsar matches topics within one namespace/],
    ['acme/(a|b)/orders', /does not name one namespace/],
    ['public/default/', /has no expression after the namespace/],
    ['orders-(', /"orders-\(" is not a valid regular expression/],
  ])('refuses %p', (value, message) => {
    expect(() => parseTopicPattern(value, 'p')).toThrow(message);
  });

  it('is checked by @BabelHandler, with its own option rules', () => {
    expect(() => BabelHandler('urn:x', { topicsPattern: 'a/b(' })).toThrow(/@BabelHandler topicsPattern/);
    expect(() => BabelHandler('urn:x', { topicsPattern: 'orders-.*', topic: 'orders' })).toThrow(
      '@BabelHandler takes topic or topicsPattern, not both: a pattern handler consumes what matches',
    );
    expect(() => BabelHandler('urn:x', { patternDiscoveryMs: 1000 })).toThrow(
      '@BabelHandler patternDiscoveryMs is only for a handler with topicsPattern',
    );
    expect(() => BabelHandler('urn:x', { topicsPattern: 'o.*', patternDiscoveryMs: 50 })).toThrow(
      '@BabelHandler patternDiscoveryMs must be a whole number of ms from 100 to 3600000, got 50',
    );
  });
});

describe('matchingTopics', () => {
  const pattern = parseTopicPattern('orders.*', 'p');

  it('matches whole local names of the namespace, a partitioned topic once', () => {
    const listed = [
      ns('orders'),
      ns('orders-eu-partition-0'),
      ns('orders-eu-partition-1'),
      ns('old-orders'),
      'persistent://acme/default/orders-x',
      'non-persistent://public/default/orders-live',
    ];
    expect(matchingTopics(pattern, listed)).toEqual([ns('orders'), ns('orders-eu')]);
  });

  it('never matches a dead-letter topic, the excluded one, or a system topic', () => {
    const listed = [ns('orders.dlq'), ns('orders-us'), ns('orders-failed'), ns('__change_events'), ns('orders-a.dlq')];
    expect(matchingTopics(pattern, listed, (topic) => topic === ns('orders-failed'))).toEqual([ns('orders-us')]);
    expect(matchingTopics(parseTopicPattern('.*', 'p'), [ns('__change_events'), ns('x')])).toEqual([ns('x')]);
  });

  it("never matches a subscription's retry topic (<topic>.<subscription>.retry)", () => {
    const listed = [ns('orders-a'), ns('orders-a.billing.retry'), ns('orders-a.retry-x')];
    expect(matchingTopics(pattern, listed)).toEqual([ns('orders-a'), ns('orders-a.retry-x')]);
  });
});

describe('topicListerOf', () => {
  it('knows the WebSocket client and the testing kit, not a client it did not make', async () => {
    expect(topicListerOf(new PulsarWebSocketClient({ serviceUrl: 'http://127.0.0.1:1' }))).toBeDefined();
    expect(topicListerOf({ subscribe: () => undefined })).toBeUndefined();
    const pulsar = new InMemoryPulsar();
    await (await pulsar.createProducer({ topic: 'orders-a' })).send({ data: Buffer.from('{}') });
    expect(await topicListerOf(pulsar)!(parseTopicPattern('orders-.*', 'p'))).toEqual([ns('orders-a')]);
  });
});

describe('PatternWatch', () => {
  const logger = () => {
    const lines: string[] = [];
    return {
      lines,
      log: (l: string) => void lines.push(l),
      warn: (l: string) => void lines.push(`warn ${l}`),
      error: () => {},
    };
  };
  // PatternWatch reads the pattern and the subscription name of its origin.
  const binding = () =>
    ({
      topic: 'persistent://public/default/orders-.*',
      subscription: 'sub',
      routes: new Map(),
      pattern: { pattern: parseTopicPattern('orders-.*', 'p'), discoveryMs: 100 },
    }) as unknown as ConstructorParameters<typeof PatternWatch>[0];

  it('consumes what matches at start, then each new topic once, from its first message', async () => {
    let listed = [ns('orders-a'), ns('orders-b'), ns('orders-b.dlq')];
    const consumed: Array<[string, boolean]> = [];
    const log = logger();
    const watch = new PatternWatch(binding(), {
      list: async () => listed,
      excluded: () => false,
      taken: (topic) => topic === ns('orders-b'),
      consume: async (topic, late) => void consumed.push([topic, late]),
      logger: log,
    });
    await watch.start();
    expect(consumed).toEqual([[ns('orders-a'), false]]);
    expect(log.lines).toEqual([
      expect.stringMatching(/^warn persistent:\/\/public\/default\/orders-b matches topicsPattern/),
    ]);
    listed = [...listed, ns('orders-c')];
    watch.watch();
    while (consumed.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    await watch.stop();
    expect(consumed).toEqual([
      [ns('orders-a'), false],
      [ns('orders-c'), true],
    ]);
    expect(watch.topics).toEqual([ns('orders-a'), ns('orders-c')]);
    expect(log.lines.filter((line) => line.includes('orders-b matches'))).toHaveLength(1);
  });

  it('logs a failed look once and keeps looking', async () => {
    let fail = true;
    let looks = 0;
    const log = logger();
    const watch = new PatternWatch(binding(), {
      list: async () => {
        looks += 1;
        if (fail) throw new Error('HTTP 503');
        return [ns('orders-z')];
      },
      excluded: () => false,
      taken: () => false,
      consume: async () => undefined,
      logger: log,
    });
    watch.watch();
    while (looks < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    fail = false;
    while (!watch.topics.length) await new Promise((resolve) => setTimeout(resolve, 20));
    await watch.stop();
    expect(log.lines.filter((line) => line.includes('looking for new topics failed (HTTP 503)'))).toHaveLength(1);
    expect(log.lines).toContain(
      'topicsPattern persistent://public/default/orders-.*: listing the namespace works again',
    );
  });
});

describe('inPatternForm: what ctx.getTopic() reports for a found topic, in the form the pattern was written', () => {
  it.each([
    ['orders-.*', 'orders-eu'],
    ['acme/ops/orders-.*', 'acme/ops/orders-eu'],
    ['persistent://acme/ops/orders-.*', 'persistent://acme/ops/orders-eu'],
  ])('%s finds %s', (written, reported) => {
    const pattern = parseTopicPattern(written, 'topicsPattern');
    expect(inPatternForm(pattern, `${namespacePrefix(pattern)}orders-eu`)).toBe(reported);
  });
});
