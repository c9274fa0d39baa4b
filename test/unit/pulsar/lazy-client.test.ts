// The module's client, created on first need: nothing is loaded before the first producer or consumer, it is
// made once, a failed creation is tried again, and close() before any use creates nothing.
import { BabelQueueError, PulsarWebSocketClient } from '../../../lib/index.js';
import type { PulsarConsumerConfig, PulsarProducerConfig } from '../../../lib/pulsar/client-types.js';
import { clientNameOf } from '../../../lib/nest/client/producer-settings.js';
import { clientUrlOf } from '../../../lib/pulsar/startup-failure.js';
import { topicListerOf } from '../../../lib/pulsar/topic-lister.js';
import { LazyPulsarClient } from '../../../lib/pulsar/index.js';

class FakeAuthenticationToken {
  constructor(readonly params: { token: string }) {}
}

/** A native client that records what it was asked; it has the raw native client's own methods. */
class FakeNativeClient {
  static made = 0;
  readonly producers: string[] = [];
  closed = false;
  constructor(readonly config: Record<string, unknown>) {
    FakeNativeClient.made += 1;
  }
  async createProducer(config: PulsarProducerConfig) {
    this.producers.push(config.topic);
    return { send: async () => null, flush: async () => null, close: async () => null, getTopic: () => config.topic };
  }
  async subscribe(config: PulsarConsumerConfig): Promise<never> {
    throw new Error(`no broker for ${config.topic}`);
  }
  async close() {
    this.closed = true;
    return null;
  }
  createReader() {}
  getPartitionsForTopic() {}
}

const fakeNative = { Client: FakeNativeClient, AuthenticationToken: FakeAuthenticationToken };

beforeEach(() => {
  FakeNativeClient.made = 0;
});

describe('LazyPulsarClient', () => {
  it('loads and creates nothing until the first producer, then creates the client once', async () => {
    let loads = 0;
    const lazy = new LazyPulsarClient(
      { serviceUrl: 'pulsar://broker:6650' },
      { loadNative: async () => ((loads += 1), fakeNative) },
    );
    expect(lazy.kind).toBe('native');
    expect(lazy.current).toBeUndefined();
    expect(loads).toBe(0);
    await Promise.all([lazy.createProducer({ topic: 'a' }), lazy.createProducer({ topic: 'b' })]);
    expect(loads).toBe(1);
    expect(FakeNativeClient.made).toBe(1);
    const created = (await lazy.open()) as unknown as FakeNativeClient;
    expect(created).toBeInstanceOf(FakeNativeClient);
    expect(lazy.current).toBe(created);
    // The library's calls go through the native adapter (its producer settings applied), not to the raw client.
    expect(created.producers.map((topic) => topic.replace(/^persistent:\/\/public\/default\//, ''))).toEqual([
      'a',
      'b',
    ]);
    await lazy.close();
    expect(created.closed).toBe(true);
  });

  it('checks its settings when it is made, before anything is loaded', () => {
    const loadNative = async () => fakeNative;
    expect(() => new LazyPulsarClient({ serviceUrl: 'kafka://x' }, { loadNative })).toThrow(/unsupported scheme/);
    expect(() => new LazyPulsarClient({ serviceUrl: 'http://x', auth: { token: ' ' } }, { loadNative })).toThrow(
      /non-blank token/,
    );
    expect(
      () => new LazyPulsarClient({ serviceUrl: 'http://x', clientOptions: { operationTimeoutMs: -1 } }, { loadNative }),
    ).toThrow(/operationTimeoutMs/);
    expect(FakeNativeClient.made).toBe(0);
  });

  it('a failed creation is not kept: the error each time, then the client once it can be made', async () => {
    // Node's own error for a package that is not installed.
    const missing = Object.assign(new Error("Cannot find package 'pulsar-client' imported from /app/x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    let installed = false;
    const lazy = new LazyPulsarClient(
      { serviceUrl: 'pulsar://broker:6650' },
      { loadNative: async () => (installed ? fakeNative : Promise.reject(missing)) },
    );
    const notInstalled = /the package "pulsar-client" is not installed: run "npm install pulsar-client"/;
    await expect(lazy.subscribe({ topic: 't', subscription: 's' })).rejects.toThrow(notInstalled);
    await expect(lazy.createProducer({ topic: 't' })).rejects.toThrow(notInstalled);
    await expect(lazy.open()).rejects.toBeInstanceOf(BabelQueueError);
    installed = true;
    await expect(lazy.open()).resolves.toBeInstanceOf(FakeNativeClient);
    await lazy.close();
  });

  it('close() before any use creates nothing; a use after close() is refused', async () => {
    let loads = 0;
    const lazy = new LazyPulsarClient(
      { serviceUrl: 'pulsar://broker:6650' },
      { loadNative: async () => ((loads += 1), fakeNative) },
    );
    await lazy.close();
    await lazy.close();
    expect(loads).toBe(0);
    await expect(lazy.createProducer({ topic: 't' })).rejects.toThrow(/the Pulsar client is closed/);
    expect(loads).toBe(0);
  });

  it('close() during the creation closes the client once it is made', async () => {
    let release!: () => void;
    const loaded = new Promise<void>((resolve) => (release = resolve));
    const lazy = new LazyPulsarClient(
      { serviceUrl: 'pulsar://broker:6650' },
      { loadNative: async () => (await loaded, fakeNative) },
    );
    const opening = lazy.open();
    const closing = lazy.close();
    release();
    const created = (await opening) as unknown as FakeNativeClient;
    await closing;
    expect(created.closed).toBe(true);
  });

  it('is known by its kind and URL before it exists: producer settings, start-up errors, topic listing', async () => {
    const ws = new LazyPulsarClient({ serviceUrl: ' http://127.0.0.1:8080 ', auth: { token: 'jwt' } });
    expect(clientNameOf(ws)).toBe('websocket');
    expect(clientUrlOf(ws)).toEqual({ serviceUrl: 'http://127.0.0.1:8080', kind: 'websocket' });
    expect(topicListerOf(ws)).toBeInstanceOf(Function);
    expect(ws.current).toBeUndefined();
    const native = new LazyPulsarClient({ serviceUrl: 'pulsar://broker:6650' }, { loadNative: async () => fakeNative });
    expect(clientNameOf(native)).toBe('native');
    expect(await ws.open()).toBeInstanceOf(PulsarWebSocketClient);
    await ws.close();
  });
});
