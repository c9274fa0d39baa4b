// Client selection by scheme, and the native client loaded only when used (with a clear error when missing).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BabelQueueError, PulsarWebSocketClient } from '../../../lib/index.js';
import { clientKindFor, createPulsarClient, loadNativePulsar } from '../../../lib/pulsar/client-factory.js';

class FakeAuthenticationToken {
  constructor(readonly params: { token: string }) {}
}

class FakeNativeClient {
  static configs: Array<Record<string, unknown>> = [];
  constructor(readonly config: Record<string, unknown>) {
    FakeNativeClient.configs.push(config);
  }
  async createProducer() {
    throw new Error('not used');
  }
  async subscribe() {
    throw new Error('not used');
  }
  async close() {
    return null;
  }
}

const fakeNative = { Client: FakeNativeClient, AuthenticationToken: FakeAuthenticationToken };

describe('clientKindFor', () => {
  it.each([
    ['pulsar://localhost:6650', 'native'],
    ['PULSAR+SSL://broker:6651', 'native'],
    ['http://localhost:8080', 'websocket'],
    ['https://broker', 'websocket'],
    ['ws://localhost:8080', 'websocket'],
    ['wss://broker', 'websocket'],
  ])('%s → %s', (url, kind) => {
    expect(clientKindFor(url)).toBe(kind);
  });

  it('names the allowed schemes for anything else', () => {
    expect(() => clientKindFor('kafka://x')).toThrow(
      /unsupported scheme "kafka:": use pulsar:\/\/ or pulsar\+ssl:\/\/ .* http:\/\/, https:\/\/, ws:\/\/, wss:\/\//,
    );
  });
});

describe('createPulsarClient', () => {
  it('builds a PulsarWebSocketClient for http(s)/ws(s) without loading pulsar-client', async () => {
    let loaded = false;
    const { client, kind } = await createPulsarClient(
      { serviceUrl: 'http://127.0.0.1:1', auth: { token: 'jwt' }, clientOptions: { operationTimeoutMs: 1000 } },
      { loadNative: async () => ((loaded = true), fakeNative) },
    );
    expect(kind).toBe('websocket');
    expect(client).toBeInstanceOf(PulsarWebSocketClient);
    expect(loaded).toBe(false);
    await client.close();
  });

  it('builds the native Client with AuthenticationToken for pulsar://', async () => {
    FakeNativeClient.configs = [];
    const { client, kind } = await createPulsarClient(
      { serviceUrl: ' pulsar://broker:6650 ', auth: { token: 'jwt' }, clientOptions: { operationTimeoutSeconds: 5 } },
      { loadNative: async () => ({ default: fakeNative }) },
    );
    expect(kind).toBe('native');
    expect(client).toBeInstanceOf(FakeNativeClient);
    const [config] = FakeNativeClient.configs;
    expect(config).toMatchObject({ serviceUrl: 'pulsar://broker:6650', operationTimeoutSeconds: 5 });
    expect(config!.authentication).toBeInstanceOf(FakeAuthenticationToken);
    expect((config!.authentication as FakeAuthenticationToken).params).toEqual({ token: 'jwt' });
  });

  it('fails with an error naming pulsar-client when the package is not installed (a real import where it is absent)', async () => {
    // The project itself has pulsar-client (the test runs build it): import it from a folder that has none.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-no-native-'));
    const loader = path.join(dir, 'load.mjs');
    fs.writeFileSync(loader, "export default () => import('pulsar-client');\n");
    const { default: loadNative } = (await import(pathToFileURL(loader).href)) as { default: () => Promise<unknown> };
    const failure = createPulsarClient({ serviceUrl: 'pulsar://localhost:6650' }, { loadNative });
    await expect(failure).rejects.toBeInstanceOf(BabelQueueError);
    await expect(failure).rejects.toThrow(
      /the package "pulsar-client" is not installed: run "npm install pulsar-client", or use an http\(s\):\/\/ or ws\(s\):\/\/ serviceUrl/,
    );
  });

  it('tells an installed-but-broken pulsar-client apart from a missing one', async () => {
    const broken = Object.assign(
      new Error("Cannot find module '/x/node_modules/pulsar-client/build/Release/pulsar.node'"),
      { code: 'MODULE_NOT_FOUND' },
    );
    await expect(loadNativePulsar(async () => Promise.reject(broken))).rejects.toThrow(
      /is installed but could not be loaded/,
    );
    await expect(loadNativePulsar(async () => ({ nothing: true }))).rejects.toThrow(/exports no Client/);
  });

  it('rejects a blank token', async () => {
    await expect(createPulsarClient({ serviceUrl: 'http://x', auth: { token: '' } })).rejects.toThrow(
      /non-blank token/,
    );
  });
});

describe('clientKindFor with a list of brokers', () => {
  it.each([
    ['pulsar://a:6650,b:6650', 'native'],
    ['http://a:8080,b:8080', 'websocket'],
    ['http://a:8080,http://b:8080', 'websocket'],
  ])('%s → %s', (url, kind) => {
    expect(clientKindFor(url)).toBe(kind);
  });
});
