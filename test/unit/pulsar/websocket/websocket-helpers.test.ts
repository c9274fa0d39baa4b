import { buildConsumerQuery } from '../../../../lib/pulsar/websocket/consumer.js';
import {
  decodeHtmlEntities,
  extractBrokerMessage,
  summarizeBrokerMessage,
  toWebSocketBase,
} from '../../../../lib/pulsar/websocket/handshake.js';
import { PulsarWebSocketMessage } from '../../../../lib/pulsar/websocket/message.js';
import { isWireMessageId, PulsarWebSocketMessageId } from '../../../../lib/pulsar/websocket/message-id.js';
import { buildProducerFrame } from '../../../../lib/pulsar/websocket/producer.js';
import { backoffDelay } from '../../../../lib/pulsar/websocket/socket.js';
import { normalizeTopic, parseTopic, PulsarWebSocketError } from '../../../../lib/pulsar/websocket/index.js';

describe('websocket topic names', () => {
  it('normalizes short, three-part and full names', () => {
    expect(normalizeTopic('orders')).toBe('persistent://public/default/orders');
    expect(normalizeTopic('t/ns/orders')).toBe('persistent://t/ns/orders');
    expect(normalizeTopic('persistent://t/ns/orders')).toBe('persistent://t/ns/orders');
    expect(normalizeTopic('non-persistent://t/ns/orders')).toBe('non-persistent://t/ns/orders');
    expect(normalizeTopic('orders-partition-3')).toBe('persistent://public/default/orders-partition-3');
  });

  it('percent-encodes each path segment', () => {
    expect(parseTopic('ünï cödé+x').path).toBe('persistent/public/default/%C3%BCn%C3%AF%20c%C3%B6d%C3%A9%2Bx');
    expect(parseTopic('a?b#c').path).toBe('persistent/public/default/a%3Fb%23c');
  });

  it.each([
    '',
    'a/b',
    'a/b/c/d',
    'persistent://a/b',
    'persistent://a/b/c/d',
    'http://a/b/c',
    'persistent://a b/ns/t',
    'x ',
  ])('rejects %j', (bad) => {
    expect(() => normalizeTopic(bad)).toThrow(PulsarWebSocketError);
    try {
      normalizeTopic(bad);
    } catch (err) {
      expect((err as PulsarWebSocketError).code).toBe('InvalidTopic');
    }
  });

  it('rejects non-strings', () => {
    expect(() => normalizeTopic(undefined)).toThrow(/must be a string/);
  });
});

describe('websocket service URL', () => {
  it('maps http(s) to ws(s) and keeps a path prefix', () => {
    expect(toWebSocketBase('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080');
    expect(toWebSocketBase('http://127.0.0.1:8080/')).toBe('ws://127.0.0.1:8080');
    expect(toWebSocketBase('https://pulsar.example.com')).toBe('wss://pulsar.example.com');
    expect(toWebSocketBase('ws://h:1/prefix/')).toBe('ws://h:1/prefix');
    expect(toWebSocketBase('wss://h')).toBe('wss://h');
  });

  it('rejects the binary protocol and garbage', () => {
    expect(() => toWebSocketBase('pulsar://h:6650')).toThrow(/web service URL/);
    expect(() => toWebSocketBase('::')).toThrow(/not a URL/);
  });
});

describe('handshake error bodies', () => {
  const jetty =
    '<html>\n<head>\n<title>Error 409 Failed to create producer/consumer: {&quot;errorMsg&quot;:&quot;Exclusive consumer is already connected&quot;,&quot;reqId&quot;:2467586380448417179, &quot;remote&quot;:&quot;127.0.0.1/127.0.0.1:6650&quot;}</title>\n</head><body></body></html>';

  it('extracts and summarizes the Jetty title', () => {
    const message = extractBrokerMessage(jetty);
    expect(message).toBe(
      'Failed to create producer/consumer: {"errorMsg":"Exclusive consumer is already connected","reqId":2467586380448417179, "remote":"127.0.0.1/127.0.0.1:6650"}',
    );
    expect(summarizeBrokerMessage(message)).toBe(
      'Failed to create producer/consumer: Exclusive consumer is already connected',
    );
  });

  it('handles JSON and plain bodies', () => {
    expect(extractBrokerMessage('{"reason":"Topic not found"}')).toBe('Topic not found');
    expect(extractBrokerMessage('  plain text  ')).toBe('plain text');
    expect(summarizeBrokerMessage('no json here')).toBe('no json here');
    expect(summarizeBrokerMessage('Broken: {"errorMsg":"x \\"y\\"", bad json')).toBe('Broken: x "y"');
  });

  it('decodes entities', () => {
    expect(decodeHtmlEntities('&lt;a&gt; &amp; &#39;q&#x27; &unknown;')).toBe("<a> & 'q' &unknown;");
  });
});

describe('backoff', () => {
  it('doubles from the initial delay up to the cap, with bounded jitter', () => {
    const mid = (): number => 0.5;
    expect([0, 1, 2, 3, 10, 100].map((n) => backoffDelay(n, 100, 1000, mid))).toEqual([100, 200, 400, 800, 1000, 1000]);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(2, 100, 30000);
      expect(d).toBeGreaterThanOrEqual(320);
      expect(d).toBeLessThanOrEqual(480);
    }
    expect(backoffDelay(50, 100, 500, () => 1)).toBe(500);
  });
});

describe('message ids and messages', () => {
  it('decodes the MessageIdData protobuf behind the base64 id', () => {
    const id = new PulsarWebSocketMessageId('CAUQADAA');
    expect([id.ledgerId, id.entryId, id.partition, id.batchIndex]).toEqual([5, 0, -1, -1]);
    expect(id.toString()).toBe('CAUQADAA');
    expect(PulsarWebSocketMessageId.deserialize(id.serialize()).toString()).toBe('CAUQADAA');
    // ledger 300, entry 7, partition 2, batch index 1
    const encoded = Buffer.from([0x08, 0xac, 0x02, 0x10, 0x07, 0x18, 0x02, 0x20, 0x01]).toString('base64');
    expect(new PulsarWebSocketMessageId(encoded).describe()).toBe('(300,7,2,1)');
  });

  it('recognizes wire ids', () => {
    expect(isWireMessageId('CAUQADAA')).toBe(true);
    expect(isWireMessageId('')).toBe(false);
    expect(isWireMessageId('garbage!!')).toBe(false);
    expect(isWireMessageId(42)).toBe(false);
  });

  it('parses the broker frame', () => {
    const message = new PulsarWebSocketMessage(
      {
        messageId: 'CAUQADAA',
        payload: Buffer.from([0, 255]).toString('base64'),
        properties: { a: 'b' },
        publishTime: '2018-11-26T14:22:59.817+01:00',
        redeliveryCount: 2,
      },
      'persistent://public/default/x',
      1,
    );
    expect([...message.getData()]).toEqual([0, 255]);
    expect(message.getPublishTimestamp()).toBe(Date.UTC(2018, 10, 26, 13, 22, 59, 817));
    expect(message.getEventTimestamp()).toBe(0);
    expect(message.getRedeliveryCount()).toBe(2);
    expect(message.getPartitionKey()).toBe('');
    message.getProperties().a = 'mutated';
    expect(message.getProperties()).toEqual({ a: 'b' });
  });
});

describe('frames and query parameters', () => {
  it('maps native message fields to the WebSocket producer frame', () => {
    const frame = buildProducerFrame(
      't',
      {
        data: Buffer.from('hi'),
        properties: { k: 'v' },
        partitionKey: 'key',
        deliverAt: 1700000000000,
        deliverAfter: 250.4,
        eventTimestamp: 1700000000123,
      },
      '7',
    );
    expect(frame).toEqual({
      payload: 'aGk=',
      context: '7',
      properties: { k: 'v' },
      key: 'key',
      deliverAt: 1700000000000,
      deliverAfterMs: 250,
      eventTime: '2023-11-14T22:13:20.123Z',
    });
    expect(buildProducerFrame('t', { data: Buffer.alloc(0), partitionKey: '', properties: {} }, '1')).toEqual({
      payload: '',
      context: '1',
    });
  });

  it('encodes a subarray Buffer without its backing store', () => {
    const backing = Buffer.from('xxhelloxx');
    expect(buildProducerFrame('t', { data: backing.subarray(2, 7) }, '1').payload).toBe(
      Buffer.from('hello').toString('base64'),
    );
  });

  it('builds consumer query parameters with broker names', () => {
    const query = buildConsumerQuery('t', {
      topic: 't',
      subscription: 's',
      subscriptionType: 'KeyShared',
      receiverQueueSize: 10,
      nAckRedeliverTimeoutMs: 200,
      consumerName: 'c',
      subscriptionInitialPosition: 'Earliest',
    });
    expect(Object.fromEntries(query)).toEqual({
      subscriptionType: 'Key_Shared',
      receiverQueueSize: '10',
      negativeAckRedeliveryDelay: '200',
      consumerName: 'c',
      subscriptionInitialPosition: 'Earliest',
    });
    expect(Object.fromEntries(buildConsumerQuery('t', { topic: 't', subscription: 's' }))).toEqual({
      subscriptionType: 'Exclusive',
    });
    expect(() => buildConsumerQuery('t', { topic: 't', subscription: 's', nAckRedeliverTimeoutMs: -1 })).toThrow(
      /nAckRedeliverTimeoutMs/,
    );
  });
});
