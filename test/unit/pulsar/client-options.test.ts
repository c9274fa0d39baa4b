// The pass-through Pulsar settings: validation, the WebSocket query parameters they become, and the refusals
// (a setting a client cannot honour fails naming the setting and the client, never dropped in silence).
import 'reflect-metadata';
import { BabelHandler, BabelProducerPool, BabelPulsarClient, BabelQueueOptionsError } from '../../../lib/index.js';
import { checkClientOptions, optionNames, unsupportedReason } from '../../../lib/pulsar/client-options.js';
import { buildConsumerQuery } from '../../../lib/pulsar/websocket/consumer.js';
import { buildProducerQuery } from '../../../lib/pulsar/websocket/producer.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { nativeProducerConfig, refuseUnsupported } from '../../../lib/pulsar/native/native-options.js';
import { bindingConsumerOptions } from '../../../lib/nest/server/subscription-plan.js';
import { resolveModuleOptions } from '../../../lib/nest/module/module-options.js';
import type { Binding, Route } from '../../../lib/nest/server/handler-routes.js';
import type { PulsarProducerConfig } from '../../../lib/pulsar/client-types.js';
import { FakeClient } from '../nest/support/fake-client.js';

const query = (params: URLSearchParams): Record<string, string> => Object.fromEntries(params);

describe('checkClientOptions', () => {
  it('keeps valid settings and drops undefined ones', () => {
    expect(
      checkClientOptions('consumer', { ackTimeoutMs: 0, consumerName: 'a', readCompacted: undefined }, 'o'),
    ).toEqual({ ackTimeoutMs: 0, consumerName: 'a' });
    expect(checkClientOptions('producer', { compressionType: 'ZSTD', batchingMaxMessages: 10 }, 'o')).toEqual({
      compressionType: 'ZSTD',
      batchingMaxMessages: 10,
    });
  });

  it('refuses settings the library controls, naming the option to use instead', () => {
    expect(() => checkClientOptions('consumer', { subscriptionType: 'Shared' }, 'options.consumerOptions')).toThrow(
      'options.consumerOptions.subscriptionType cannot be passed through: the subscription type is the server option subscriptionType',
    );
    expect(() => checkClientOptions('consumer', { listener: () => undefined }, 'x')).toThrow(/x\.listener cannot/);
    expect(() => checkClientOptions('producer', { hashingScheme: 'Murmur3_32Hash' }, 'x')).toThrow(
      /x\.hashingScheme cannot be passed through: the library fixes JavaStringHash/,
    );
    expect(() => checkClientOptions('producer', { topic: 't' }, 'x')).toThrow(/x\.topic cannot be passed through/);
  });

  it('refuses unknown settings, listing the allowed ones', () => {
    expect(() => checkClientOptions('producer', { compresion: 'LZ4' }, 'x')).toThrow(
      `x.compresion is not a Pulsar producer setting the library passes through; allowed: ${optionNames('producer').join(', ')}`,
    );
  });

  it('refuses invalid values, naming the setting and the value', () => {
    expect(() => checkClientOptions('consumer', { ackTimeoutMs: 5000 }, 'x')).toThrow(
      'x.ackTimeoutMs must be 0 (off) or a whole number of ms >= 10000, got the number 5000',
    );
    expect(() => checkClientOptions('producer', { compressionType: 'lz4' }, 'x')).toThrow(
      'x.compressionType must be one of None, Zlib, LZ4, ZSTD, SNAPPY, got the string "lz4"',
    );
    expect(() => checkClientOptions('producer', { messageRoutingMode: 'CustomPartition' }, 'x')).toThrow(
      /x\.messageRoutingMode must be one of RoundRobinDistribution, UseSinglePartition/,
    );
    expect(() =>
      checkClientOptions(
        'consumer',
        { keySharedPolicy: { keyShareMode: 'Sticky', stickyRanges: [{ start: 5, end: 1 }] } },
        'x',
      ),
    ).toThrow(/x\.keySharedPolicy\.stickyRanges must be a list/);
    expect(() => checkClientOptions('consumer', 'fast', 'x')).toThrow(
      /x must be an object of Pulsar consumer settings/,
    );
    expect(() => checkClientOptions('producer', { chunkingEnabled: true, batchingEnabled: true }, 'x')).toThrow(
      /chunkingEnabled needs batching off/,
    );
  });

  it('refuses, for a known client, the settings it cannot honour, naming the client', () => {
    expect(() => checkClientOptions('producer', { chunkingEnabled: true }, 'o', 'websocket')).toThrow(
      "o.chunkingEnabled is not supported by the WebSocket client: the broker's WebSocket API has no producer parameter for it",
    );
    expect(() => checkClientOptions('consumer', { priorityLevel: 1 }, 'o', 'native')).toThrow(
      'o.priorityLevel is not supported by the native pulsar-client: its Node binding has no such consumer setting',
    );
    expect(checkClientOptions('consumer', { priorityLevel: 1 }, 'o', 'websocket')).toEqual({ priorityLevel: 1 });
    expect(unsupportedReason('producer', 'compressionType', 'websocket')).toBeUndefined();
  });
});

describe('WebSocket query parameters', () => {
  it('maps producer settings to the broker names and values', () => {
    expect(
      query(
        buildProducerQuery('t', {
          topic: 't',
          producerName: 'p',
          sendTimeoutMs: 3000,
          batchingEnabled: true,
          batchingMaxMessages: 50,
          batchingMaxPublishDelayMs: 5,
          maxPendingMessages: 100,
          compressionType: 'Zlib',
          messageRoutingMode: 'UseSinglePartition',
          initialSequenceId: 7,
        }),
      ),
    ).toEqual({
      producerName: 'p',
      sendTimeoutMillis: '3000',
      batchingEnabled: 'true',
      batchingMaxMessages: '50',
      batchingMaxPublishDelay: '5',
      maxPendingMessages: '100',
      compressionType: 'ZLIB',
      messageRoutingMode: 'SinglePartition',
      initialSequenceId: '7',
    });
  });

  it('spreads messages without a key round robin unless told otherwise', () => {
    expect(query(buildProducerQuery('t', { topic: 't' }))).toEqual({ messageRoutingMode: 'RoundRobinPartition' });
  });

  it('refuses producer settings the WebSocket API has no parameter for, and unknown ones', () => {
    expect(() => buildProducerQuery('t', { topic: 't', chunkingEnabled: true })).toThrow(
      /chunkingEnabled is not supported by the WebSocket client: .* \(topic t\)/,
    );
    expect(() => buildProducerQuery('t', { topic: 't', accessMode: 'Exclusive' })).toThrow(
      /accessMode is not supported/,
    );
    const unknown = { topic: 't', hashingScheme: 'BoostHash' } as unknown as PulsarProducerConfig;
    expect(() => buildProducerQuery('t', unknown)).toThrow(
      /hashingScheme is not a producer setting of the WebSocket client/,
    );
  });

  it('maps consumer settings and refuses the rest', () => {
    expect(
      query(
        buildConsumerQuery('t', {
          topic: 't',
          subscription: 's',
          ackTimeoutMs: 10_000,
          priorityLevel: 2,
          consumerName: 'c',
          receiverQueueSize: 3,
        }),
      ),
    ).toEqual({
      subscriptionType: 'Exclusive',
      ackTimeoutMillis: '10000',
      priorityLevel: '2',
      consumerName: 'c',
      receiverQueueSize: '3',
    });
    expect(() => buildConsumerQuery('t', { topic: 't', subscription: 's', readCompacted: true })).toThrow(
      /readCompacted is not supported by the WebSocket client/,
    );
    expect(() => buildConsumerQuery('t', { topic: 't', subscription: 's', receiverQueueSize: -1 })).toThrow(
      /receiverQueueSize must be an integer >= 0/,
    );
  });
});

describe('native client settings', () => {
  it('turns batching off for chunking, and refuses chunking with batching asked for', () => {
    expect(nativeProducerConfig({ topic: 't', chunkingEnabled: true })).toEqual({
      topic: 't',
      chunkingEnabled: true,
      batchingEnabled: false,
    });
    expect(nativeProducerConfig({ topic: 't', compressionType: 'LZ4' })).toEqual({
      topic: 't',
      compressionType: 'LZ4',
    });
    expect(() => nativeProducerConfig({ topic: 't', chunkingEnabled: true, batchingEnabled: true })).toThrow(
      /chunkingEnabled needs batching off for topic "t"/,
    );
  });

  it('refuses a consumer setting its Node binding lacks', () => {
    expect(() => refuseUnsupported('consumer', { topic: 't', priorityLevel: 0 })).toThrow(
      /priorityLevel is not supported by the native pulsar-client/,
    );
  });
});

describe('where the settings are accepted', () => {
  it('module options: checked against the client the serviceUrl selects', () => {
    expect(() =>
      resolveModuleOptions({
        serviceUrl: 'http://localhost:8080',
        topic: 't',
        producerOptions: { chunkingEnabled: true },
      }),
    ).toThrow(
      'Invalid BabelQueueModule options: options.producerOptions.chunkingEnabled is not supported by the WebSocket ' +
        "client: the broker's WebSocket API has no producer parameter for it (use a pulsar:// serviceUrl for the " +
        'native client, or leave it out)',
    );
    expect(() =>
      resolveModuleOptions({
        serviceUrl: 'http://localhost:8080',
        topic: 't',
        producerOptions: { chunkingEnabled: true },
      }),
    ).toThrow(BabelQueueOptionsError);
    expect(() =>
      resolveModuleOptions({
        serviceUrl: 'pulsar://localhost:6650',
        topic: 't',
        consumer: { consumerOptions: { priorityLevel: 1 } },
      }),
    ).toThrow(/options\.consumer\.consumerOptions\.priorityLevel is not supported by the native pulsar-client/);
    const resolved = resolveModuleOptions({
      serviceUrl: 'pulsar://localhost:6650',
      topic: 't',
      producerOptions: { compressionType: 'LZ4' },
      producerOptionsByTopic: { big: { chunkingEnabled: true } },
      consumer: { consumerOptions: { ackTimeoutMs: 30_000 } },
    });
    expect(resolved.producerSettings).toEqual({
      producerOptions: { compressionType: 'LZ4' },
      producerOptionsByTopic: { 'persistent://public/default/big': { chunkingEnabled: true } },
    });
    expect(resolved.server.consumerOptions).toEqual({ ackTimeoutMs: 30_000 });
  });

  it('the producer pool gives each topic its settings merged over those for every topic', async () => {
    const configs: PulsarProducerConfig[] = [];
    const client = new FakeClient();
    const create = client.createProducer.bind(client);
    client.createProducer = (config) => {
      configs.push(config);
      return create(config);
    };
    const pool = new BabelProducerPool(client, {
      producerOptions: { compressionType: 'LZ4', producerName: undefined },
      producerOptionsByTopic: { 'persistent://public/default/big': { chunkingEnabled: true, compressionType: 'None' } },
    });
    await pool.producerFor('orders');
    await pool.producerFor('big');
    expect(configs).toEqual([
      { topic: 'orders', compressionType: 'LZ4' },
      { topic: 'big', compressionType: 'None', chunkingEnabled: true },
    ]);
    await pool.close();
  });

  it('BabelPulsarClient and the pool check the settings against a WebSocket client at construction', () => {
    const webSocket = new PulsarWebSocketClient({ serviceUrl: 'http://127.0.0.1:1' });
    expect(() => new BabelProducerPool(webSocket, { producerOptions: { blockIfQueueFull: true } })).toThrow(
      /options\.producerOptions\.blockIfQueueFull is not supported by the WebSocket client/,
    );
    expect(
      () => new BabelPulsarClient({ serviceUrl: 'ws://localhost:8080', producerOptions: { chunkingEnabled: true } }),
    ).toThrow(/chunkingEnabled is not supported by the WebSocket client/);
    expect(
      () =>
        new BabelPulsarClient({
          client: webSocket,
          producers: new BabelProducerPool(webSocket),
          producerOptions: { compressionType: 'LZ4' },
        }),
    ).toThrow(/apply to the producers this client creates/);
  });

  it('@BabelHandler checks its consumerOptions', () => {
    expect(() => BabelHandler('urn:x', { consumerOptions: { ackTimeoutMs: -1 } })).toThrow(
      '@BabelHandler consumerOptions.ackTimeoutMs must be 0 (off)',
    );
    expect(() => BabelHandler('urn:x', { consumerOptions: { subscription: 'y' } as never })).toThrow(
      /consumerOptions\.subscription cannot be passed through/,
    );
  });

  it('handlers sharing a subscription must agree on a setting', () => {
    const route = (name: string, consumerOptions: Route['consumerOptions']): Route => ({
      handler: (async () => undefined) as unknown as Route['handler'],
      name,
      ...(consumerOptions && { consumerOptions }),
    });
    const binding: Binding = {
      topic: 'orders',
      subscription: 'babelqueue',
      routes: new Map([
        ['urn:a', route('A.handle', { consumerName: 'one', ackTimeoutMs: 10_000 })],
        ['urn:b', route('B.handle', { ackTimeoutMs: 10_000 })],
      ]),
    };
    expect(bindingConsumerOptions(binding, { receiverQueueSize: 10, consumerName: 'server' }, 'native')).toEqual({
      receiverQueueSize: 10,
      consumerName: 'one',
      ackTimeoutMs: 10_000,
    });
    binding.routes.set('urn:c', route('C.handle', { consumerName: 'two' }));
    expect(() => bindingConsumerOptions(binding, undefined, undefined)).toThrow(
      'A.handle and C.handle share the consumer of topic orders (subscription babelqueue) but ask for different ' +
        'consumerOptions.consumerName: give one of them its own subscription',
    );
    binding.routes.delete('urn:c');
    binding.routes.set('urn:d', route('D.handle', { priorityLevel: 1 }));
    expect(() => bindingConsumerOptions(binding, undefined, 'native')).toThrow(
      /consumerOptions of topic orders \(subscription babelqueue\)\.priorityLevel is not supported by the native/,
    );
  });
});
